import { randomBytes } from 'node:crypto'
import { APP_ERR_UNKNOWN_TOOL, isToolError, toolError } from '../errors.js'
import type { Logger } from '../logger.js'
import type { ClientChannel, ToolContext, ToolResult } from '../tools/define-tool.js'
import type { Registry } from './registry.js'

/** How a call ended, as logged. */
export type CallOutcome = 'ok' | 'tool_error' | 'invalid_arguments' | 'timeout' | 'cancelled' | 'failed'

/** Everything a call needs besides its name and arguments. */
export interface CallOptions {
  log: Logger
  /** Aborted when the client cancels or the session closes. */
  signal: AbortSignal
  timeoutMs: number
  /** Level of the per-call outcome log line. */
  callLogLevel: 'debug' | 'info'
  progress: ToolContext['progress']
  notify: ToolContext['notify']
  client: ClientChannel
}

const errorResult = (text: string): ToolResult => ({ content: [{ type: 'text', text }], isError: true })

/** Runs `run` until it settles or the signal fires (a tool that ignores its signal still loses the race). */
function raceSignal<T> (work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason)
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason)
    signal.addEventListener('abort', onAbort, { once: true })
    work.then(
      v => { signal.removeEventListener('abort', onAbort); resolve(v) },
      e => { signal.removeEventListener('abort', onAbort); reject(e) }
    )
  })
}

/**
 * tools/call: validate → inject → run under deadline and signal → map errors.
 * Throws only protocol errors (unknown tool); everything else is a tool result.
 */
export async function callTool (registry: Registry, name: string, rawArgs: unknown, options: CallOptions): Promise<ToolResult> {
  const tool = registry.tool(name)
  if (tool === undefined) throw new APP_ERR_UNKNOWN_TOOL(name)
  const started = performance.now()
  let outcome: CallOutcome = 'ok'
  const { log } = options
  try {
    const check = tool.validate(rawArgs)
    if (!check.ok) {
      outcome = 'invalid_arguments'
      const code = check.unknown ? 'UNKNOWN_ARGUMENT' : 'INVALID_ARGUMENT'
      return errorResult(toolError(code, check.message, `fix the argument and call ${name} again (its inputSchema in tools/list lists every parameter)`).message)
    }
    const args = check.value
    for (const [param, service] of Object.entries(tool.injected)) args[param] = registry.services[service]

    // One controller and one timer per call: cheaper than AbortSignal.any/timeout on the hot path.
    const controller = new AbortController()
    const onParentAbort = (): void => controller.abort(options.signal.reason)
    options.signal.addEventListener('abort', onParentAbort, { once: true })
    let timedOut = false
    const timer = setTimeout(() => {
      timedOut = true
      controller.abort(new Error(`deadline of ${options.timeoutMs} ms passed`))
    }, options.timeoutMs)
    const signal = controller.signal
    const context: ToolContext = { signal, log, progress: options.progress, notify: options.notify, client: options.client }
    try {
      const result = await raceSignal(Promise.resolve().then(() => tool.definition.run(args, context)), signal)
      if (result.isError === true) outcome = 'tool_error'
      return result
    } catch (err) {
      if (timedOut && !options.signal.aborted) {
        outcome = 'timeout'
        return errorResult(toolError('TIMEOUT', `${name} did not finish within ${options.timeoutMs} ms`, 'narrow the request (a smaller path, fewer items or a smaller page_size) and call again').message)
      }
      if (options.signal.aborted) {
        outcome = 'cancelled'
        return errorResult(toolError('CANCELLED', `${name} was cancelled`).message)
      }
      throw err
    } finally {
      clearTimeout(timer)
      options.signal.removeEventListener('abort', onParentAbort)
    }
  } catch (err) {
    if (isToolError(err)) {
      outcome = 'tool_error'
      return errorResult(err.message)
    }
    outcome = 'failed'
    const ref = randomBytes(4).toString('hex')
    log.error({ err, tool: name, ref }, 'tool failed')
    return errorResult(`Tool '${name}' failed (ref ${ref})`)
  } finally {
    log[options.callLogLevel]({ tool: name, durationMs: Math.round((performance.now() - started) * 1000) / 1000, outcome }, 'tool call')
  }
}
