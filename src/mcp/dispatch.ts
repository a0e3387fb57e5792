import { APP_ERR_UNKNOWN_TOOL, isToolError, toolError } from '../errors.js'
import type { ToolContext, ToolResult } from '../tools/define-tool.js'
import type { RegisteredTool, Registry } from './registry.js'

/** How a call ended, as logged. */
export type CallOutcome = 'ok' | 'partial' | 'tool_error' | 'invalid_arguments' | 'timeout' | 'cancelled' | 'failed'

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
  /** Epoch ms after which the deadline sweep aborts the call. */
  deadline = Infinity
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
  /** The call: its abort handle (the session cancels through it) and the context `run` receives. */
  call: CallHandle & ToolContext
  timeoutMs: number
  /** Level of the per-call outcome log line. */
  callLogLevel: 'debug' | 'info'
  /** The request's channel: its logFields go on the call's log lines (HTTP: request id, principal). */
  channel?: { readonly logFields?: Record<string, unknown> }
  /** Told how each call ended (metrics); duration in seconds. */
  onCall?: (tool: string, outcome: CallOutcome, seconds: number) => void
}

// One sweep for every deadline instead of a timer per call (setTimeout/clearTimeout were ~7% of a
// small call); a deadline fires up to DEADLINE_TICK_MS late.
const DEADLINE_TICK_MS = 25
const deadlines = new Set<CallHandle>()
let sweeper: NodeJS.Timeout | undefined
let idleSweeps = 0

function sweepDeadlines (): void {
  const now = Date.now()
  for (const handle of deadlines) {
    if (handle.deadline <= now) {
      deadlines.delete(handle)
      handle.abort(new Error('deadline passed'), 'timeout')
    }
  }
  // Keep ticking briefly when idle so back-to-back calls don't re-arm the interval each time.
  if (deadlines.size > 0) idleSweeps = 0
  else if (++idleSweeps > 40 && sweeper !== undefined) {
    clearInterval(sweeper)
    sweeper = undefined
  }
}

function watchDeadline (handle: CallHandle, deadline: number, ms: number): void {
  handle.deadline = deadline
  deadlines.add(handle)
  if (sweeper === undefined) {
    sweeper = setInterval(sweepDeadlines, Math.min(DEADLINE_TICK_MS, ms))
    sweeper.unref()
  }
}

/** The transport's fields for a call's log lines (HTTP: request id, principal), read only for a line that is written. */
const logFieldsOf = (options: CallOptions): Record<string, unknown> | undefined => options.channel?.logFields

const errorResult = (text: string): ToolResult => ({ content: [{ type: 'text', text }], isError: true })

/** Waits for the tool until it settles or the handle aborts (a tool that ignores its signal still loses the race). */
function untilAborted (handle: CallHandle, work: Promise<ToolResult>): Promise<ToolResult> {
  return new Promise<ToolResult>((resolve, reject) => {
    // Only an abort that lands while run() is still executing synchronously gets here first (the
    // sweep and cancellations are asynchronous); a guard so such a call is not left waiting.
    /* c8 ignore next */
    if (handle.reason !== undefined) return reject(handle.reason)
    handle.onAbort = reject
    work.then(resolve, reject)
  })
}

/** A call's result and how it ended. */
interface Attempt { result: ToolResult, outcome: CallOutcome }

/**
 * tools/call: validate → inject → run under deadline and signal → map errors.
 * Throws only protocol errors (unknown tool); everything else is a tool result.
 */
export async function callTool (registry: Registry, name: string, rawArgs: unknown, options: CallOptions): Promise<ToolResult> {
  const tool = registry.tool(name)
  if (tool === undefined) throw new APP_ERR_UNKNOWN_TOOL(name)
  const started = performance.now()
  const attempted = attempt(registry, tool, rawArgs, options)
  // A synchronous tool (or a refused argument) has its answer now: no further promise to wait on.
  const { result, outcome } = attempted instanceof Promise ? await attempted : attempted
  const ms = performance.now() - started
  const { log } = options.call
  // The line's object is built only when the level is on (debug, the default, is off in production).
  if (log.isLevelEnabled(options.callLogLevel)) log[options.callLogLevel]({ tool: name, durationMs: Math.round(ms * 1000) / 1000, outcome, ...logFieldsOf(options) }, 'tool call')
  options.onCall?.(name, outcome, ms / 1000)
  return result
}

/** Validates, injects and runs; an abort, a tool error or a crash becomes an error result. */
function attempt (registry: Registry, tool: RegisteredTool, rawArgs: unknown, options: CallOptions): Attempt | Promise<Attempt> {
  try {
    const check = tool.validate(rawArgs)
    if (!check.ok) {
      const code = check.unknown ? 'UNKNOWN_ARGUMENT' : 'INVALID_ARGUMENT'
      return { result: errorResult(toolError(code, check.message, `fix the argument and call ${tool.wire.name} again (its inputSchema in tools/list lists every parameter)`).message), outcome: 'invalid_arguments' }
    }
    const args = check.value
    for (const [param, service] of Object.entries(tool.injected)) args[param] = registry.services[service]
    const ran = run(tool, args, options.call, options.timeoutMs)
    return ran instanceof Promise ? ran.catch((err: unknown) => failure(tool, err, options)) : ran
  } catch (err) {
    return failure(tool, err, options)
  }
}

/** The error result for a call that threw or was aborted. */
function failure (tool: RegisteredTool, err: unknown, options: CallOptions): Attempt {
  const { call } = options
  const name = tool.wire.name
  // Whatever the tool threw once aborted, the abort is the answer.
  if (call.timedOut) {
    return { result: errorResult(toolError('TIMEOUT', `${name} did not finish within ${options.timeoutMs} ms`, tool.definition.timeoutHint ?? 'narrow the request (a smaller path or fewer items) and call again').message), outcome: 'timeout' }
  }
  if (call.cancelled) return { result: errorResult(toolError('CANCELLED', `${name} was cancelled`).message), outcome: 'cancelled' }
  if (isToolError(err)) return { result: errorResult(err.message), outcome: 'tool_error' }
  // The global Web Crypto: node:crypto would load at startup for this rare path (~4 ms of a cold start).
  const ref = Buffer.from(crypto.getRandomValues(new Uint8Array(4))).toString('hex')
  call.log.error({ err, tool: name, ref, ...logFieldsOf(options) }, 'tool failed')
  return { result: errorResult(`Tool '${name}' failed (ref ${ref})`), outcome: 'failed' }
}

/** A tool's result without its internal `partial` flag, and the outcome that flag means. */
function settled (result: ToolResult): Attempt {
  const outcome: CallOutcome = result.isError === true ? 'tool_error' : result.partial === true ? 'partial' : 'ok'
  if (result.partial === undefined) return { result, outcome }
  const { partial: _partial, ...sent } = result
  return { result: sent, outcome }
}

/** Runs the tool; an asynchronous one under its deadline, and rejected when the call aborts. */
function run (tool: RegisteredTool, args: Record<string, unknown>, call: CallOptions['call'], timeoutMs: number): Attempt | Promise<Attempt> {
  const started = Date.now()
  const out = tool.definition.run(args, call)
  // A synchronous tool skips the deadline and the race: nothing can abort it mid-run anyway.
  if (!(out instanceof Promise)) return settled(out)
  watchDeadline(call, started + timeoutMs, timeoutMs)
  return untilAborted(call, out).then(settled).finally(() => {
    deadlines.delete(call)
    call.onAbort = undefined
  })
}
