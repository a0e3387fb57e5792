import { randomBytes } from 'node:crypto'
import { APP_ERR_UNKNOWN_TOOL, isToolError, toolError } from '../errors.js'
import type { Logger } from '../logger.js'
import type { ClientChannel, ToolContext, ToolResult } from '../tools/define-tool.js'
import type { Registry } from './registry.js'

/** How a call ended, as logged. */
export type CallOutcome = 'ok' | 'tool_error' | 'invalid_arguments' | 'timeout' | 'cancelled' | 'failed'

/**
 * One running call. Aborting goes through abort(), which also settles the race directly:
 * on Node 20 an abort listener costs more than the rest of a small call.
 */
export class CallHandle {
  /** Set when the client cancelled or the session closed (no response is due). */
  cancelled = false
  timedOut = false
  /** Why the call was aborted, once it was. */
  reason: Error | undefined = undefined
  /** Rejects the call's race; installed by callTool while the tool runs. */
  onAbort: ((reason: Error) => void) | undefined = undefined
  // Created on first use: constructing an AbortSignal was a quarter of a small call's CPU on Node 20.
  private controller: AbortController | undefined = undefined

  /** The call's AbortSignal (what tools see as ctx.signal). */
  get signal (): AbortSignal {
    if (this.controller === undefined) {
      this.controller = new AbortController()
      if (this.reason !== undefined) this.controller.abort(this.reason)
    }
    return this.controller.signal
  }

  /** Aborts the call's signal and stops waiting for its result. */
  abort (reason: Error, kind: 'cancel' | 'timeout'): void {
    if (this.reason !== undefined) return
    this.reason = reason
    if (kind === 'timeout') this.timedOut = true
    else this.cancelled = true
    this.controller?.abort(reason)
    this.onAbort?.(reason)
  }
}

/** Everything a call needs besides its name and arguments. */
export interface CallOptions {
  log: Logger
  /** The call's abort handle (the session cancels through it). */
  handle: CallHandle
  timeoutMs: number
  /** Level of the per-call outcome log line. */
  callLogLevel: 'debug' | 'info'
  progress: ToolContext['progress']
  notify: ToolContext['notify']
  client: ClientChannel
}

const errorResult = (text: string): ToolResult => ({ content: [{ type: 'text', text }], isError: true })

/** Runs the tool until it settles or the handle aborts (a tool that ignores its signal still loses the race). */
function runUntilAborted (handle: CallHandle, run: () => Promise<ToolResult> | ToolResult): Promise<ToolResult> {
  return new Promise<ToolResult>((resolve, reject) => {
    if (handle.reason !== undefined) return reject(handle.reason)
    handle.onAbort = reject
    Promise.resolve().then(run).then(resolve, reject)
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

    const { handle } = options
    const timer = setTimeout(() => handle.abort(new Error(`deadline of ${options.timeoutMs} ms passed`), 'timeout'), options.timeoutMs)
    const context: ToolContext = {
      get signal () { return handle.signal },
      log,
      progress: options.progress,
      notify: options.notify,
      client: options.client
    }
    try {
      const result = await runUntilAborted(handle, () => tool.definition.run(args, context))
      if (result.isError === true) outcome = 'tool_error'
      return result
    } catch (err) {
      if (handle.timedOut) {
        outcome = 'timeout'
        return errorResult(toolError('TIMEOUT', `${name} did not finish within ${options.timeoutMs} ms`, 'narrow the request (a smaller path, fewer items or a smaller page_size) and call again').message)
      }
      if (handle.cancelled) {
        outcome = 'cancelled'
        return errorResult(toolError('CANCELLED', `${name} was cancelled`).message)
      }
      throw err
    } finally {
      clearTimeout(timer)
      handle.onAbort = undefined
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
