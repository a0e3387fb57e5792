import { APP_ERR_INVALID_PARAMS, APP_ERR_MISSING_CLIENT_CAPABILITY, APP_ERR_UNKNOWN_METHOD, toolError, withRpcData } from '../../base/errors.js'
import { isInputRequired } from '../../tool-api/define-tool.js'
import type { Logger } from '../../base/logger.js'
import type { RequestChannel, Send } from '../wire/channel.js'
import { META, MODERN_PROTOCOL_VERSIONS, type Envelope, type Rejection, type RoutingHeaders } from '../era.js'
import { bindingOf, INPUT_METHODS, readInput } from '../call/input-required.js'
import { checkRoutingHeaders } from './headers.js'
import { methodsOf } from '../methods.js'
import type { Handler, ModernScope } from '../method-types.js'
import { errorMessage, LOG_LEVELS, RPC_ERROR, toRpcError, type RequestId } from '../wire/rpc.js'
import type { ServerShared } from '../engine-state.js'
import type { CallHandle } from '../call/call-handle.js'
import { TASKS_EXTENSION } from '../tasks/tasks.js'
import type { TaskOwner } from '../tasks/task-store.js'

// The 2026-07-28 era: no handshake and no session. Every request names its version and the
// client's capabilities in params._meta, and is answered on its own.

const MODERN_METHODS = methodsOf('modern')
type ModernHandler = Handler<ModernScope>

/** A modern request as the engine answers it. */
export interface ModernRequestMessage { id: RequestId, method: string, params: Record<string, unknown> }

/** What answering a modern request produced: the message (none for a cancelled call) and its HTTP status. */
export interface ModernAnswer { message: string | undefined, status: number }

/** Per-connection state a modern request runs in: stdio keeps one for the process, HTTP one per POST. */
export interface ModernContext {
  log: Logger
  /** Where messages related to the request go when it has no channel of its own (stdio). */
  send: Send | undefined
  /** Running calls by request id (notifications/cancelled finds them on stdio). */
  inflight: Map<RequestId, CallHandle>
  /** HTTP only: the routing headers, checked against the body. */
  headers?: RoutingHeaders
  /** stdio: aborted when the connection ends (its subscriptions and readers stop). */
  ended?: AbortSignal
  /** Whose tasks the request creates and sees: HTTP, its principal (no session in this era); stdio, the connection. */
  owner: TaskOwner
}

/** One modern request's scope: the capabilities and log level its envelope declared, nothing remembered. */
class ModernRequest implements ModernScope {
  readonly era = 'modern'
  closed = false
  readonly clientCapabilities: Record<string, unknown>
  readonly logThreshold: number
  private shutdown: AbortController | undefined = undefined

  constructor (readonly shared: ServerShared, private readonly context: ModernContext, envelope: Envelope, private readonly message: ModernRequestMessage) {
    this.clientCapabilities = envelope.clientCapabilities
    // spec 2026-07-28 logging: no notifications/message unless the request's _meta asks for a level.
    this.logThreshold = envelope.logLevel ?? LOG_LEVELS.length
  }

  get log (): Logger { return this.context.log }
  get send (): Send | undefined { return this.context.send }
  get inflight (): Map<RequestId, CallHandle> { return this.context.inflight }
  get owner (): TaskOwner { return this.context.owner }

  get closedSignal (): AbortSignal {
    if (this.shutdown === undefined) {
      this.shutdown = new AbortController()
      if (this.closed) this.shutdown.abort(new Error('request stream closed'))
    }
    const { ended } = this.context
    return ended === undefined ? this.shutdown.signal : AbortSignal.any([this.shutdown.signal, ended])
  }

  /** The request's stream closed (HTTP) or the connection ended: its call is cancelled. */
  close (reason = new Error('request stream closed')): void {
    if (this.closed) return
    this.closed = true
    this.shutdown?.abort(reason)
    this.inflight.get(this.message.id)?.abort(reason, 'cancel')
  }

  /** A 2026 client takes a task when this request declares the tasks extension (SEP-2663). */
  acceptsTask (): boolean {
    return (this.clientCapabilities.extensions as Record<string, unknown> | undefined)?.[TASKS_EXTENSION] !== undefined
  }

  request (method: string): Promise<Record<string, unknown>> {
    return Promise.reject(toolError('CLIENT_CAPABILITY_MISSING', `'${method}' cannot be sent: protocol 2026-07-28 has no server→client requests`, 'a tool asks for input by returning an input_required result instead'))
  }

  reply (id: RequestId, method: string, result: object): string {
    if (!isInputRequired(result)) return this.shared.modern.reply(id, method, result)
    // Only tools/call and prompts/get hand back what a tool or prompt returned (SEP-2322); the state goes out signed.
    const { requestState } = result
    return this.shared.modern.reply(id, method, requestState === undefined ? result : { ...result, requestState: this.shared.states.seal(requestState, bindingOf(method, this.message.params)) })
  }

  replyJson (id: RequestId, method: string, json: string): string {
    return this.shared.modern.replyJson(id, method, json)
  }

  discover (): object {
    const { shared } = this
    const result: Record<string, unknown> = { supportedVersions: MODERN_PROTOCOL_VERSIONS, capabilities: shared.modern.capabilities }
    if (shared.instructions !== undefined) result.instructions = shared.instructions
    return result
  }

  async listen (id: RequestId, params: Record<string, unknown>, channel: RequestChannel | undefined): Promise<string | undefined> {
    const filter = params.notifications
    if (typeof filter !== 'object' || filter === null || Array.isArray(filter)) {
      throw new APP_ERR_INVALID_PARAMS("'notifications' must be an object naming the notifications to receive, e.g. { \"toolsListChanged\": true }")
    }
    const send = channel?.send ?? this.send
    // This server's lists never change while it runs, so it takes on none of the requested kinds: the
    // acknowledgement says so, and the stream stays open until the client (or a shutdown) ends it.
    send?.(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/subscriptions/acknowledged', params: { notifications: {}, _meta: { [META.subscriptionId]: id } } }))
    const signal = this.closedSignal
    const ended = this.shared.activity.subscriptions
    await new Promise<void>(resolve => {
      const end = (): void => { ended.delete(end); resolve() }
      ended.add(end)
      signal.addEventListener('abort', end, { once: true })
    })
    // A closed stream (or connection) gets nothing; a server that ends the subscription says so with the empty result.
    if (signal.aborted) return undefined
    return this.reply(id, 'subscriptions/listen', { _meta: { [META.subscriptionId]: id } })
  }
}

/** The serialized error for a rejection, with its status. */
export function rejected (id: RequestId | null, error: Rejection): ModernAnswer {
  return { message: errorMessage(id, toRpcError(error, { modern: true })), status: error.statusCode ?? 500 }
}

/**
 * Answers one modern request: routing headers (HTTP), then the method, then the client capabilities
 * it needs, then the handler. `close` is what the transport calls when the request's stream ends.
 */
export function answerModern (shared: ServerShared, request: ModernRequestMessage, envelope: Envelope, context: ModernContext, channel?: RequestChannel): { answer: Promise<ModernAnswer>, close: () => void } {
  const scope = new ModernRequest(shared, context, envelope, request)
  return { answer: run(scope, request, context, channel), close: () => scope.close() }
}

/**
 * The same for a stream connection, which cancels through notifications/cancelled or its end, never a request's
 * stream, and has no status to report: the message alone, one promise and one object fewer per request.
 */
export function serveModern (shared: ServerShared, request: ModernRequestMessage, envelope: Envelope, context: ModernContext): Promise<string | undefined> {
  const scope = new ModernRequest(shared, context, envelope, request)
  const admitted = admit(scope, request, context)
  if (typeof admitted !== 'function') return Promise.resolve(admitted.message)
  try {
    const out = handle(scope, request, undefined, admitted)
    return out instanceof Promise ? out.catch((err: unknown) => failure(scope, request, err).message) : Promise.resolve(out)
  } catch (err) {
    return Promise.resolve(failure(scope, request, err).message)
  }
}

function run (scope: ModernRequest, request: ModernRequestMessage, context: ModernContext, channel: RequestChannel | undefined): Promise<ModernAnswer> {
  const admitted = admit(scope, request, context)
  if (typeof admitted !== 'function') return Promise.resolve(admitted)
  // Not an async function: one promise fewer per request on the hot path (tools/call's own is enough).
  try {
    return Promise.resolve(handle(scope, request, channel, admitted)).then(message => ({ message, status: 200 }), (err: unknown) => failure(scope, request, err))
  } catch (err) {
    return Promise.resolve(failure(scope, request, err))
  }
}

/** The ladder before the handler — routing headers (HTTP), the method, the client capabilities it needs: the method's handler, or the refusal. */
function admit (scope: ModernRequest, { id, method, params }: ModernRequestMessage, context: ModernContext): ModernHandler | ModernAnswer {
  const { shared } = scope
  if (context.headers !== undefined) {
    const bad = checkRoutingHeaders(shared, method, params, context.headers)
    if (bad !== undefined) return rejected(id, bad)
  }
  const entry = MODERN_METHODS.get(method)
  if (entry === undefined) return rejected(id, new APP_ERR_UNKNOWN_METHOD(`${method.slice(0, 100)}${shared.modern.removed.has(method) ? ' (removed in protocol 2026-07-28)' : ''}`))
  const missing = shared.modern.missingCapabilities(method, params, scope.clientCapabilities)
  if (missing === undefined) return entry.handle
  return rejected(id, withRpcData(new APP_ERR_MISSING_CLIENT_CAPABILITY(Object.keys(missing).join(', ')), { requiredCapabilities: missing }))
}

/** The method's handler, with a retry's answers read first (only a retry carries answers or state: a first call skips the binding string). */
function handle (scope: ModernRequest, { id, method, params }: ModernRequestMessage, channel: RequestChannel | undefined, handler: ModernHandler): string | undefined | Promise<string | undefined> {
  const retry = INPUT_METHODS.has(method) && (params.inputResponses !== undefined || params.requestState !== undefined)
  const input = retry ? readInput(params, bindingOf(method, params), scope.shared.states) : undefined
  return handler({ id, method, params, channel, scope, input })
}

/** A handler's error, in-band with 200 (the ladder above sets its own statuses). */
function failure (scope: ModernRequest, { id, method }: ModernRequestMessage, err: unknown): ModernAnswer {
  const rpc = toRpcError(err, { modern: true })
  if (rpc.code === RPC_ERROR.InternalError) scope.log.error({ err, method }, 'request failed')
  return { message: errorMessage(id, rpc), status: 200 }
}
