import { EventEmitter } from 'node:events'
import { PassThrough } from 'node:stream'
import type { Test } from 'tap'
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js'
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js'
import { assembleHttp } from '../../src/app.js'
import { loadConfig, parseConfigFlags } from '../../src/base/config.js'
import { createLogger } from '../../src/base/logger.js'
import { serveStdio } from '../../src/mcp/stdio.js'
import { createRuntime, httpOffersTasks, type Runtime, type RuntimeExtras } from '../../src/runtime.js'
import type { ProcessHost } from '../../src/bin/process-host.js'
import { serveStdioCommand } from '../../src/bin/stdio.js'
import { serveHttpCommand } from '../../src/bin/http.js'
import { within } from '../../src/mcp/call/tool-call.js'
import { stdoutLines } from './rpc.js'

// The servers the bins start, in this process: the same config parsing, runtime and transports (stdio framing over
// streams, Fastify on a real port), without a process start per test. Spawned-bin smoke tests live in test/bin/.

/** Logs kept as text, as a spawned server's stderr would hold them. */
function textLog (config: { logLevel: string }) {
  let text = ''
  const log = createLogger(config, { write: (line: string) => { text += line } })
  return { log, text: () => text }
}

async function runtimeOf (t: Test, args: string[], env: NodeJS.ProcessEnv, extras?: RuntimeExtras) {
  const config = loadConfig(parseConfigFlags(args), { ...process.env, ...env })
  const logs = textLog(config)
  const runtime = await createRuntime(config, logs.log, { extras })
  t.teardown(() => runtime.close())
  return { config, runtime, logs }
}

/** `workspace-mcp stdio ...args` in-process: what spawnStdio gives (send, response, stdout lines, stderr) and an SDK transport. */
export async function stdioInProcess (t: Test, args: string[] = [], env: NodeJS.ProcessEnv = {}) {
  const { runtime, logs } = await runtimeOf(t, args, env)
  const input = new PassThrough()
  const output = new PassThrough()
  const stdio = serveStdio({ server: runtime.server, input, output, log: runtime.log })
  stdio.answered.then(runtime.warmUp, () => {})
  t.teardown(() => { stdio.close(); input.end() })
  const { lines: stdout, response } = stdoutLines(output, () => `logs: ${logs.text()}`)
  const write = (raw: string | Buffer): void => { input.write(raw) }
  const send = (message: unknown): void => { write(JSON.stringify(message) + '\n') }
  return { runtime, stdout, output, stderr: logs.text, write, send, response, transport: () => new StreamTransport(input, output) }
}

/** `workspace-mcp serve ...args` in-process on 127.0.0.1 port 0: its /mcp URL and its logs. */
export async function httpInProcess (t: Test, args: string[] = [], env: NodeJS.ProcessEnv = {}, extras?: RuntimeExtras): Promise<{ url: string, runtime: Runtime, output: () => string }> {
  const config = loadConfig(parseConfigFlags(['--host', '127.0.0.1', '--port', '0', ...args]), { ...process.env, ...env })
  const logs = textLog(config)
  const { app, runtime } = await assembleHttp(config, logs.log, { extras, offerTasks: httpOffersTasks(config) })
  t.teardown(() => app.close())
  const address = await app.listen({ host: config.host, port: 0 })
  runtime.warmUp()
  return { url: `${address}/mcp`, runtime, output: logs.text }
}

/** An SDK client transport over the two streams an in-process stdio server reads and writes. */
class StreamTransport implements Transport {
  onmessage?: (message: JSONRPCMessage) => void
  onclose?: () => void
  onerror?: (error: Error) => void
  private readonly buffer = new ReadBuffer()

  constructor (private readonly toServer: PassThrough, private readonly fromServer: PassThrough) {}

  async start (): Promise<void> {
    this.fromServer.on('data', (chunk: Buffer | string) => {
      this.buffer.append(Buffer.from(chunk))
      for (let message = this.buffer.readMessage(); message !== null; message = this.buffer.readMessage()) this.onmessage?.(message)
    })
  }

  async send (message: JSONRPCMessage): Promise<void> {
    this.toServer.write(serializeMessage(message))
  }

  async close (): Promise<void> {
    this.onclose?.()
  }
}

/** A host for a serving command run in this process: its streams, its logs as text, signals to send, the exit it asks for. */
export function testHost (env: NodeJS.ProcessEnv = {}) {
  const input = new PassThrough()
  const output = new PassThrough()
  const signals = new EventEmitter()
  const faults = new EventEmitter()
  let logs = ''
  let stderr = ''
  let exitWith!: (code: number) => void
  let ended = false
  const exited = new Promise<number>(resolve => { exitWith = resolve })
  const host: ProcessHost = {
    env: { ...process.env, ...env },
    input: () => input,
    output,
    logs: async () => ({ write: (line: string) => { logs += line } }),
    stderr: { write: (text: string) => { stderr += text } },
    signals,
    exit: (code) => { ended = true; exitWith(code) },
    faults
  }
  return {
    host,
    input,
    output,
    exited,
    ended: () => ended,
    signal: (name: 'SIGTERM' | 'SIGINT') => signals.emit(name),
    /** Raises a failure nothing caught, as the process would report it to the command's handlers. */
    fault: (event: 'unhandledRejection' | 'uncaughtException', err: unknown) => faults.emit(event, err),
    logs: () => logs,
    stderr: () => stderr
  }
}

/** Resolves with the exit code, or undefined when none was asked for within `ms`. */
const exitWithin = async (exited: Promise<number>, ms: number): Promise<number | undefined> => await within(exited, ms)

/**
 * The `workspace-mcp stdio` command (src/bin/stdio.ts) in this process, as the bin runs it but on streams: send,
 * response and stdout lines; `exited` resolves with the code it exits with. Ended by EOF on teardown.
 */
export function stdioCommandInProcess (t: Test, args: string[], env: NodeJS.ProcessEnv = {}) {
  const run = testHost(env)
  const started = serveStdioCommand(args, { codeCache: 'none' }, run.host)
  started.catch(() => {})
  const { lines: stdout, partial, response } = stdoutLines(run.output, () => `logs: ${run.logs()}`)
  t.teardown(async () => {
    run.input.end()
    await exitWithin(run.exited, 10_000)
  })
  const send = (message: unknown): void => { run.input.write(JSON.stringify(message) + '\n') }
  return { ...run, started, stdout, partial, response, send, exitWithin: async (ms: number) => await exitWithin(run.exited, ms) }
}

/** The `workspace-mcp serve` command (src/bin/http.ts) in this process: its base URL once listening; SIGTERM on teardown. */
export async function httpCommandInProcess (t: Test, args: string[], env: NodeJS.ProcessEnv = {}) {
  const run = testHost(env)
  t.teardown(async () => {
    if (run.ended()) return
    run.signal('SIGTERM')
    await exitWithin(run.exited, 15_000)
  })
  await serveHttpCommand(['--host', '127.0.0.1', '--port', '0', ...args], run.host)
  const url = /listening at (http:\/\/\S+)\/mcp/.exec(run.logs())?.[1]
  if (url === undefined) throw new Error(`serve logged no address: ${run.logs()}`)
  return { ...run, url, exitWithin: async (ms: number) => await exitWithin(run.exited, ms) }
}
