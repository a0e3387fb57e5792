import { APP_ERR_INVALID_PARAMS, APP_ERR_INVALID_REQUEST, APP_ERR_UNKNOWN_TOOL, isToolError, toolError } from '../../base/errors.js'
import { logFailure, type Logger } from '../../base/logger.js'
import { CallHandle, type CallScope } from './call-handle.js'
import { isInputRequired, type ClientChannel, type InputRequiredResult, type RunResult, type ToolContext, type ToolInput, type ToolResult } from '../../tool-api/define-tool.js'
import type { RequestChannel, Send } from '../wire/channel.js'
import type { Deadlines } from './deadlines.js'
import { askClient, MAX_ROUNDS } from './input-required.js'
import type { RegisteredTool } from '../registry/registry.js'
import { LOG_LEVELS, RPC_ERROR, type RequestId } from '../wire/rpc.js'
import { legacyTask, taskCreated } from '../tasks/task-wire.js'
import type { TaskRecord } from '../tasks/task-store.js'
import type { TaskUpdate } from '../tasks/tasks.js'
import type { Services } from '../../services/index.js'
import type { CallOutcome, ServerShared } from '../engine-state.js'
import { pruneMentions } from '../../services/prune-mentions.js'

/** One tools/call: its abort handle and what its context reaches (channel, progress, client). */
class ToolCall extends CallHandle {
  private lastProgress = -Infinity
  private finished = false
  /** What `run` receives: read-only, and without the abort handle. */
  readonly context: ToolContext
  /** The client's answers to the previous round (SEP-2322), set by the engine between rounds. */
  input: ToolInput | undefined = undefined
  /** What the call's tool is given: the registry's services, or those the client's roots narrowed. */
  services: Services | undefined = undefined
  /** How the last run ended. */
  outcome: CallOutcome = 'ok'
  /** Each run's time allowance, ms: the tool timeout, or a task's longer one once the call became a task. */
  budgetMs: number | undefined = undefined
  /** The task's allowance when the call may become a task (ctx.taskBudgetMs). */
  taskBudgetMs: number | undefined = undefined

  constructor (
    private readonly scope: CallScope,
    readonly name: string,
    readonly send: Send | undefined,
    private readonly progressToken: unknown,
    readonly channel: RequestChannel | undefined
  ) {
    super()
    this.context = new CallContext(this, scope.log)
  }

  closeStream (): void {
    this.channel?.closeStream?.()
  }

  get unserved (): ReadonlySet<string> {
    return this.scope.shared.registry.unserved
  }

  get client (): ClientChannel {
    return {
      capabilities: this.scope.clientCapabilities,
      request: (method, params) => this.scope.request(method, params, this.signal, this.send)
    }
  }

  /** Marks the call done: later progress is dropped (spec: only while the request runs). */
  finish (): void {
    this.finished = true
  }

  progress (value: number, total?: number, message?: string): void {
    // spec progress: only for a token the client sent, strictly increasing, only while running.
    if (this.send === undefined || this.progressToken === undefined || value <= this.lastProgress || this.finished) return
    this.lastProgress = value
    const params: Record<string, unknown> = { progressToken: this.progressToken, progress: value }
    if (total !== undefined) params.total = total
    if (message !== undefined) params.message = message
    this.send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/progress', params }))
  }

  notify (level: string, data: unknown): void {
    if (this.send === undefined || LOG_LEVELS.indexOf(level) < this.scope.logThreshold) return
    this.send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { level, logger: this.name, data } }))
  }
}

/** The context a tool receives: frozen, and its call reachable only through these members (no abort, no deadline). */
class CallContext implements ToolContext {
  readonly #call: ToolCall

  constructor (call: ToolCall, readonly log: Logger) {
    this.#call = call
    Object.freeze(this)
  }

  get signal (): AbortSignal { return this.#call.signal }
  get client (): ClientChannel { return this.#call.client }
  async progress (progress: number, total?: number, message?: string): Promise<void> { this.#call.progress(progress, total, message) }
  async notify (level: 'debug' | 'info' | 'notice' | 'warning' | 'error', data: unknown): Promise<void> { this.#call.notify(level, data) }
  closeStream (): void { this.#call.closeStream() }
  get input (): ToolInput | undefined { return this.#call.input }
  get taskBudgetMs (): number | undefined { return this.#call.taskBudgetMs }
  get unserved (): ReadonlySet<string> { return this.#call.unserved }
}
Object.freeze(CallContext.prototype)

/** Answers one tools/call request on `scope`: undefined when the client cancelled it (no response is due). `input`: a modern retry's answers. */
export async function answerToolCall (scope: CallScope, id: RequestId, params: Record<string, unknown>, channel: RequestChannel | undefined, input?: ToolInput): Promise<string | undefined> {
  const name = params.name
  if (typeof name !== 'string') throw new APP_ERR_INVALID_PARAMS("'name' must be a string")
  if (scope.inflight.has(id)) throw new APP_ERR_INVALID_REQUEST(`request id ${JSON.stringify(id)} is already in use`)
  const meta = params._meta as Record<string, unknown> | undefined
  const call = new ToolCall(scope, name, channel?.send ?? scope.send, meta?.progressToken, channel)
  if (scope.closed) call.abort(new Error('session closed'), 'cancel')
  scope.inflight.set(id, call)
  const { shared } = scope
  const active = { tool: name, started: Date.now(), call }
  shared.activity.calls.add(active)
  // Background work (the code index's build) yields while a client waits on a call.
  const leave = shared.registry.services.activity?.enter()
  let detached = false
  call.input = input
  try {
    const visible = scope.visibleServices?.(call.send)
    if (visible !== undefined) call.services = await visible
    const taskAfterMs = taskWindow(scope, name, params)
    if (taskAfterMs !== undefined) call.taskBudgetMs = shared.tasks.settings.timeoutMs
    const first = callTool(shared, call, params.arguments)
    let result: RunResult
    if (taskAfterMs === undefined) {
      result = await first
    } else {
      // A 2025 client that asked for a task gets one whatever the tool's pace; a 2026 call becomes one past its window.
      const early = scope.era === 'legacy' ? undefined : await within(first, taskAfterMs)
      if (early === undefined) {
        // Still running: from here the call is a task, with the task's longer allowance and no request to cancel it.
        detached = true
        scope.inflight.delete(id)
        return scope.reply(id, 'tools/call', await startTask(scope, call, first, params.arguments, () => { shared.activity.calls.delete(active); leave?.() }))
      }
      result = early
    }
    // 2025 has no input_required result: the engine asks the client itself and runs the tool again.
    for (let round = 1; scope.era === 'legacy' && isInputRequired(result); round++) result = await nextRound(shared, call, result, round, params.arguments)
    // spec cancellation: no response for a request the client cancelled.
    if (call.cancelled) return undefined
    return scope.reply(id, 'tools/call', result)
  } finally {
    if (!detached) {
      call.finish()
      scope.inflight.delete(id)
      shared.activity.calls.delete(active)
      leave?.()
    }
  }
}

/** How long a call runs before it becomes a task, ms; undefined when it stays a request (the tool or the client takes no task). */
function taskWindow (scope: CallScope, name: string, params: Record<string, unknown>): number | undefined {
  const task = scope.shared.registry.tool(name)?.definition.task
  if (task === undefined || !scope.shared.offerTasks || scope.acceptsTask?.(params) !== true) return undefined
  return task.afterMs ?? 0
}

/** What `work` settled to within `ms`, or undefined while it still runs (a synchronous answer is always in time). */
export async function within<T> (work: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<undefined>(resolve => { timer = setTimeout(resolve, ms, undefined) })
  try {
    return await Promise.race([work, late])
  } finally {
    clearTimeout(timer)
  }
}

/** Turns a running call into a task: its record is stored first, then its work goes on and ends in the record. */
async function startTask (scope: CallScope, call: ToolCall, first: Promise<RunResult>, rawArgs: unknown, done: () => void): Promise<object> {
  const { shared } = scope
  const { tasks } = shared
  let record
  try {
    // A 2025 session hears of each change (notifications/tasks/status) where the call's messages go.
    const notify = scope.era === 'legacy' ? statusNotifier(call, tasks.settings.pollIntervalMs) : undefined
    record = await tasks.create(scope.owner, call.name, () => call.abort(new Error('task cancelled'), 'cancel'), notify)
  } catch (err) {
    call.abort(err as Error, 'cancel')
    call.finish()
    done()
    throw err
  }
  call.budgetMs = tasks.settings.timeoutMs
  shared.activity.deadlines.watch(call, Date.now() + tasks.settings.timeoutMs, tasks.settings.timeoutMs)
  const taskId = record.taskId
  const outcome = async (): Promise<TaskUpdate> => {
    let result = await first
    for (let round = 1; isInputRequired(result) && !call.cancelled; round++) {
      if (round > MAX_ROUNDS) {
        result = errorResult(toolError('INPUT_ROUNDS_EXCEEDED', `${call.name} still asked for input after ${MAX_ROUNDS} rounds`, 'answer its questions, or call it with different arguments').message)
        break
      }
      // A 2025 session is asked by the engine itself; a 2026 client answers with tasks/update.
      result = scope.era === 'legacy'
        ? await nextRound(shared, call, result, round, rawArgs, async (asked) => await withStatus(tasks, taskId, asked, () => askClient(asked, (method, params) => call.client.request(method, params))))
        : await taskRound(shared, call, result, rawArgs, async (asked) => ({ responses: await tasks.ask(taskId, asked.inputRequests), state: asked.requestState }))
    }
    if (call.cancelled || call.outcome === 'cancelled') return { status: 'cancelled', statusMessage: 'stopped: the server is shutting down' }
    // A crash's result is the one line failure() wrote (with the log's ref).
    if (call.outcome === 'failed') return { status: 'failed', error: { code: RPC_ERROR.InternalError, message: ((result as ToolResult).content[0] as { text: string }).text } }
    return { status: 'completed', result: result as ToolResult }
  }
  const run = async (): Promise<void> => {
    try {
      // A round that failed (the task store, while the task asked its client) ends the task failed, with the reason.
      await tasks.end(taskId, await outcome().catch((err: unknown): TaskUpdate => ({ status: 'failed', error: { code: RPC_ERROR.InternalError, message: (err as Error).message } })))
    } finally {
      shared.activity.deadlines.forget(call)
      call.finish()
      done()
    }
  }
  // Nothing awaits the task's work: its end is logged, never left to reject unhandled (that would end the process).
  run().catch(logFailure(scope.log, 'task: its end failed', { taskId, tool: call.name }))
  return taskCreated(scope.era, record, tasks.settings.pollIntervalMs)
}

/** Sends a 2025 task's every change as notifications/tasks/status, where the call's messages go (if anywhere). */
const statusNotifier = (call: ToolCall, pollIntervalMs: number) => (record: TaskRecord): void => {
  call.send?.(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/tasks/status', params: legacyTask(record, pollIntervalMs) }))
}

/** A 2025 task's status while the engine waits for the client's answers: input_required, then working again. */
async function withStatus (tasks: ServerShared['tasks'], taskId: string, asked: InputRequiredResult, ask: () => Promise<ToolInput>): Promise<ToolInput> {
  await tasks.update(taskId, { status: 'input_required', inputRequests: asked.inputRequests })
  const input = await ask()
  await tasks.update(taskId, { status: 'working' })
  return input
}

/** One more round of a 2026 task: its questions wait on the task for tasks/update; the answers go to the tool's next run. */
async function taskRound (shared: ServerShared, call: ToolCall, asked: InputRequiredResult, rawArgs: unknown, answers: (asked: InputRequiredResult) => Promise<ToolInput>): Promise<RunResult> {
  call.input = await answers(asked)
  return await callTool(shared, call, rawArgs)
}

/** One more round of a 2025 call: the tool's questions go to the client, its answers to the tool's next run. */
async function nextRound (shared: ServerShared, call: ToolCall, asked: InputRequiredResult, round: number, rawArgs: unknown, ask = async (question: InputRequiredResult): Promise<ToolInput> => await askClient(question, (method, params) => call.client.request(method, params))): Promise<RunResult> {
  const tool = shared.registry.tool(call.name) as RegisteredTool
  if (round > MAX_ROUNDS) return errorResult(toolError('INPUT_ROUNDS_EXCEEDED', `${call.name} still asked for input after ${MAX_ROUNDS} rounds`, 'answer its questions, or call it with different arguments').message)
  // The client's answers count against the call's deadline, as a server→client request inside run() would.
  shared.activity.deadlines.watch(call, Date.now() + shared.toolTimeoutMs, shared.toolTimeoutMs)
  try {
    call.input = await ask(asked)
  } catch (err) {
    const failed = failure(tool, err, call, shared.toolTimeoutMs)
    call.outcome = failed.outcome
    return failed.result
  } finally {
    shared.activity.deadlines.forget(call)
  }
  return await callTool(shared, call, rawArgs)
}

/** The transport's fields for a call's log lines (HTTP: request id, principal), read only for a line that is written. */
const logFieldsOf = (call: ToolCall): Record<string, unknown> | undefined => call.channel?.logFields

const errorResult = (text: string): ToolResult => ({ content: [{ type: 'text', text }], isError: true })

/** A call's result and how it ended. */
interface Attempt { result: RunResult, outcome: CallOutcome }

/**
 * tools/call: validate → inject → run under deadline and signal → map errors.
 * Throws only protocol errors (unknown tool); everything else is a tool result.
 */
async function callTool (shared: ServerShared, call: ToolCall, rawArgs: unknown): Promise<RunResult> {
  const tool = shared.registry.tool(call.name)
  if (tool === undefined) {
    const gated = shared.registry.unavailableError(call.name)
    if (gated === undefined) {
      const close = shared.registry.closestTool(call.name)
      throw new APP_ERR_UNKNOWN_TOOL(close === undefined ? call.name : `${call.name} (did you mean ${close}?)`)
    }
    return errorResult(gated.message)
  }
  const started = performance.now()
  const attempted = attempt(shared, tool, rawArgs, call)
  // A synchronous tool (or a refused argument) has its answer now: no further promise to wait on.
  const { result, outcome } = attempted instanceof Promise ? await attempted : attempted
  call.outcome = outcome
  const ms = performance.now() - started
  const { log } = call.context
  const level = shared.callLogLevel
  // The line's object is built only when the level is on (debug, the default, is off in production).
  if (log.isLevelEnabled(level)) log[level]({ tool: call.name, durationMs: Math.round(ms * 1000) / 1000, outcome, ...logFieldsOf(call) }, 'tool call')
  shared.activity.callEnded(call.name, outcome, ms / 1000)
  return result
}

/** Validates, injects and runs; an abort, a tool error or a crash becomes an error result. */
function attempt (shared: ServerShared, tool: RegisteredTool, rawArgs: unknown, call: ToolCall): Attempt | Promise<Attempt> {
  try {
    const check = tool.validate(rawArgs)
    if (!check.ok) {
      const code = check.unknown ? 'UNKNOWN_ARGUMENT' : 'INVALID_ARGUMENT'
      return { result: errorResult(toolError(code, check.message, `fix the argument and call ${tool.wire.name} again (its inputSchema in tools/list lists every parameter)`).message), outcome: 'invalid_arguments' }
    }
    const args = check.value
    const services = call.services ?? shared.registry.services
    for (const [param, service] of Object.entries(tool.injected)) args[param] = services[service]
    const ran = run(tool, args, call, shared.activity.deadlines, call.budgetMs ?? shared.toolTimeoutMs)
    // The allowance as it is when the call fails: a call that became a task meanwhile has the task's.
    return ran instanceof Promise ? ran.catch((err: unknown) => failure(tool, err, call, call.budgetMs ?? shared.toolTimeoutMs)) : ran
  } catch (err) {
    return failure(tool, err, call, call.budgetMs ?? shared.toolTimeoutMs)
  }
}

/** The error result for a call that threw or was aborted. */
function failure (tool: RegisteredTool, err: unknown, call: ToolCall, timeoutMs: number): Attempt {
  const name = tool.wire.name
  // Whatever the tool threw once aborted, the abort is the answer.
  if (call.timedOut) {
    const hint = pruneMentions(tool.definition.timeoutHint ?? 'narrow the request (a smaller path or fewer items) and call again', call.unserved)
    return { result: errorResult(toolError('TIMEOUT', `${name} did not finish within ${timeoutMs} ms`, hint).message), outcome: 'timeout' }
  }
  if (call.cancelled) return { result: errorResult(toolError('CANCELLED', `${name} was cancelled`).message), outcome: 'cancelled' }
  if (call.shutDown) {
    return { result: errorResult(toolError('SHUTTING_DOWN', `the server is shutting down and stopped ${name} before it finished`, 'call it again: another replica, or this server once it is back, answers it').message), outcome: 'cancelled' }
  }
  if (isToolError(err)) {
    // The model reads the message; the error behind it (a crashed thread, a store, the network) is the log's, at debug.
    if (err.cause !== undefined) call.context.log.debug({ err, tool: name, ...logFieldsOf(call) }, 'tool error with a cause')
    return { result: errorResult(err.message), outcome: 'tool_error' }
  }
  // The global Web Crypto: node:crypto would load at startup for this rare path (~4 ms of a cold start).
  const ref = Buffer.from(crypto.getRandomValues(new Uint8Array(4))).toString('hex')
  call.context.log.error({ err, tool: name, ref, ...logFieldsOf(call) }, 'tool failed')
  return { result: errorResult(`Tool '${name}' failed (ref ${ref})`), outcome: 'failed' }
}

/** A tool's result without its internal `partial` flag, and the outcome that flag means. */
function settled (result: RunResult): Attempt {
  if (isInputRequired(result)) return { result, outcome: 'input_required' }
  const outcome: CallOutcome = result.isError === true ? 'tool_error' : result.partial === true ? 'partial' : 'ok'
  if (result.partial === undefined) return { result, outcome }
  const { partial: _partial, ...sent } = result
  return { result: sent, outcome }
}

/** Waits for the tool until it settles or the call aborts (a tool that ignores its signal still loses the race). */
function untilAborted (call: CallHandle, work: Promise<RunResult>): Promise<RunResult> {
  return new Promise<RunResult>((resolve, reject) => {
    // Only an abort that lands while run() is still executing synchronously gets here first (the
    // sweep and cancellations are asynchronous); a guard so such a call is not left waiting.
    /* c8 ignore next */
    if (call.reason !== undefined) return reject(call.reason)
    call.onAbort = reject
    work.then(resolve, reject)
  })
}

/** Runs the tool; an asynchronous one under its deadline, and rejected when the call aborts. */
function run (tool: RegisteredTool, args: Record<string, unknown>, call: ToolCall, deadlines: Deadlines, timeoutMs: number): Attempt | Promise<Attempt> {
  const started = Date.now()
  const out = tool.definition.run(args, call.context)
  // A synchronous tool skips the deadline and the race: nothing can abort it mid-run anyway.
  if (!(out instanceof Promise)) return settled(out)
  deadlines.watch(call, started + timeoutMs, timeoutMs)
  return untilAborted(call, out).then(settled).finally(() => {
    deadlines.forget(call)
    call.onAbort = undefined
  })
}
