import type { Readable, Writable } from 'node:stream'
import type { DestinationStream } from 'pino'
import type { ChunkSource } from '../mcp/wire/chunk-source.js'
import { logDestination } from '../base/logger.js'
import { inputOf } from './pipe-source.js'

/**
 * What a serving command takes from its process: environment, streams, signals and exit. The bins pass the process
 * itself (processHost); tests pass streams and a recorded exit, and drive the same command in their own process.
 */
export interface ProcessHost {
  env: NodeJS.ProcessEnv
  /** What stdio serving reads: stdin as a pipe (one reused buffer) or as a stream. */
  input: () => Readable | ChunkSource
  /** What stdio serving writes: JSON-RPC only. */
  output: Writable
  /** Where log lines go, in the configured format: fd 1 for serve, fd 2 for stdio. */
  logs: (fd: 1 | 2, format: string) => Promise<DestinationStream>
  /** Where a message that is not a log line goes (a failed shutdown). */
  stderr: { write: (text: string) => unknown }
  /** SIGTERM and SIGINT arrive here. */
  signals: {
    on: (signal: 'SIGTERM' | 'SIGINT', listener: () => void) => unknown
    once: (signal: 'SIGTERM' | 'SIGINT', listener: () => void) => unknown
  }
  /** Ends the command with an exit code; the process's own exit in the bins. */
  exit: (code: number) => void
  /** Failures nothing caught (the process's own events in the bins): handled once, by handleFaults. */
  faults: {
    on: (event: 'unhandledRejection' | 'uncaughtException', listener: (err: unknown) => void) => unknown
  }
}

/** The host the bins run in: this process. */
export function processHost (): ProcessHost {
  return {
    env: process.env,
    input: () => inputOf(0, () => process.stdin),
    output: process.stdout,
    logs: logDestination,
    stderr: process.stderr,
    signals: process,
    exit: (code) => process.exit(code),
    faults: process
  }
}
