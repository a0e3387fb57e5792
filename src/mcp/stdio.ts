import { Readable, type Writable } from 'node:stream'
import type { Logger } from '../base/logger.js'
import { LineFramer } from './wire/line-framer.js'
import { readableSource, type ChunkSource } from './wire/chunk-source.js'
import type { McpServer } from './server.js'
import { invalidMessage, parseMessage, tooLargeError } from './wire/wire.js'

/** Options for serving one MCP session over a pair of byte streams. */
export interface StdioOptions {
  server: McpServer
  /** The client's bytes: a Readable, or a pipe read into one reused buffer (pipeSource). */
  input: Readable | ChunkSource
  output: Writable
  log: Logger
  /** Largest accepted line, in bytes (the SDK's default is 10 MiB); a longer line is answered -32600 and dropped. */
  maxLineBytes?: number
}

/** A running stdio session. */
export interface StdioSession {
  /** Resolves once the first message has been written (the client's initialize, usually, is answered). */
  answered: Promise<void>
  /** Resolves when input ends (EOF) or output breaks (EPIPE). */
  done: Promise<'eof' | 'output-closed'>
  /** Waits up to `ms` for in-flight requests to answer, then aborts the rest, writes what is ready and closes. */
  drain(ms: number): Promise<void>
  /** Aborts what runs, writes what is ready and stops reading. */
  close(): void
}

/**
 * Newline-delimited JSON-RPC over streams (spec basic/transports stdio), the SDK's framing
 * without its per-message zod parse. Requests run concurrently so ping and cancellation
 * are answered while a long call runs.
 */
export function serveStdio (options: StdioOptions): StdioSession {
  const { output, log, maxLineBytes = 10 * 1024 * 1024 } = options
  const input = options.input instanceof Readable ? readableSource(options.input) : options.input
  let outputOpen = true
  let finish!: (reason: 'eof' | 'output-closed') => void
  const done = new Promise<'eof' | 'output-closed'>(resolve => { finish = resolve })

  let firstWrite!: () => void
  const answered = new Promise<void>(resolve => { firstWrite = resolve })
  // Answers that become ready in the same tick leave in one write: a pipelining client gets one
  // syscall per batch instead of one per answer, and a lone answer waits no longer than the tick.
  let corked = false
  const uncork = (): void => {
    if (!corked) return
    corked = false
    output.uncork()
  }
  const write = (message: string): void => {
    if (outputOpen) {
      if (!corked) {
        corked = true
        output.cork()
        process.nextTick(uncork)
      }
      output.write(message + '\n')
    }
    firstWrite()
  }
  const session = options.server.openConnection({ send: write, log })

  const running = new Set<Promise<void>>()
  const end = (reason: 'eof' | 'output-closed'): void => {
    if (reason === 'output-closed') session.close()
    input.stop()
    finish(reason)
  }

  const onMessage = (bytes: Buffer): void => {
    const parsed = parseMessage(bytes)
    if (!parsed.ok) {
      write(invalidMessage(null, parsed.error))
      return
    }
    const task = session.handle(parsed.message).then(response => {
      if (response !== undefined) write(response)
    }, (err: unknown) => log.error({ err }, 'stdio dispatch failed'))
    running.add(task)
    // `task` cannot reject (both outcomes are handled above), so neither can this chain: nothing to catch.
    void task.finally(() => running.delete(task))
  }

  const framer = new LineFramer(maxLineBytes)
  // A line's bytes may point into the reader's buffer: each is parsed before push() is called again.
  const onChunk = (chunk: Buffer): void => {
    for (const frame of framer.push(chunk)) {
      if (frame.kind === 'line') onMessage(frame.bytes)
      else if (frame.kind === 'too-large') write(invalidMessage(null, tooLargeError()))
      else log.warn({ bytes: frame.bytes, maxLineBytes }, `dropped a ${frame.bytes}-byte line over the ${maxLineBytes}-byte limit`)
    }
  }

  input.start(onChunk, () => end('eof'))
  output.on('error', (err: NodeJS.ErrnoException) => {
    // EPIPE: the client went away; stop writing and end quietly.
    outputOpen = false
    log.debug({ code: err.code }, 'stdout closed')
    end('output-closed')
  })

  const drain = async (ms: number): Promise<void> => {
    let timer: NodeJS.Timeout | undefined
    const timeout = new Promise<void>(resolve => { timer = setTimeout(resolve, ms) })
    await Promise.race([Promise.allSettled([...running]), timeout])
    clearTimeout(timer)
    session.close()
    uncork()
  }

  return { answered, done, drain, close: () => { session.close(); uncork(); end('eof') } }
}
