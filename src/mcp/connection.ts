import { APP_ERR_INVALID_PARAMS, APP_ERR_UNKNOWN_METHOD } from '../base/errors.js'
import type { Logger } from '../base/logger.js'
import type { Send } from './wire/channel.js'
import { routeMessage } from './era.js'
import { methodsOf } from './methods.js'
import { rejected, serveModern, type ModernContext } from './modern/handler.js'
import { errorMessage, toRpcError, type RequestId } from './wire/rpc.js'
import type { ServerShared } from './engine-state.js'
import { Session } from './legacy/session.js'
import type { CallHandle } from './call/call-handle.js'
import { classify, invalidMessage, type Classified } from './wire/wire.js'
import { connectionOwner } from './tasks/task-store.js'

const MODERN_METHODS = methodsOf('modern')

/**
 * One stream connection (stdio) that speaks either era. The first `initialize` pins it to 2025 (a
 * session, exactly as before); the first request with a 2026-07-28 envelope — usually a client's
 * `server/discover` probe — pins it to the modern era, where each request stands alone.
 */
export class Connection {
  private era: 'legacy' | 'modern' | undefined = undefined
  private readonly session: Session
  /** Modern calls by request id: notifications/cancelled finds them here. */
  private readonly inflight = new Map<RequestId, CallHandle>()
  private readonly ended = new AbortController()
  /** What every modern request on this connection runs in (one object, not one per request). */
  private readonly context: ModernContext

  constructor (private readonly shared: ServerShared, options: { send: Send, log: Logger }) {
    // One client per connection, whichever era it speaks: its tasks are the connection's.
    const owner = connectionOwner()
    this.session = new Session(shared, { log: options.log, send: options.send, stateless: false, owner })
    this.context = { log: options.log, send: options.send, inflight: this.inflight, ended: this.ended.signal, owner }
  }

  /** Handles one parsed message; resolves to the serialized response, or undefined when none is due. */
  handle (message: unknown): Promise<string | undefined> {
    const classified = classify(message)
    if (this.era === 'legacy') return this.session.dispatch(classified)
    if (this.era === 'modern') return this.modern(classified)
    const route = routeMessage(classified)
    if (route.era === 'reject') return Promise.resolve(rejected(route.id, route.error).message)
    if (route.era === 'modern' && classified.kind === 'request') {
      this.era = 'modern'
      return this.modern(classified)
    }
    if (classified.kind === 'request' && classified.method === 'initialize') this.era = 'legacy'
    return this.session.dispatch(classified)
  }

  /** Requests still running, in either era. */
  get inflightCount (): number {
    return this.session.inflightCount + this.inflight.size
  }

  /** Aborts everything running and ends open subscriptions. */
  close (): void {
    this.session.close()
    const reason = new Error('connection closed')
    this.ended.abort(reason)
    for (const call of this.inflight.values()) call.abort(reason, 'cancel')
  }

  private modern (message: Classified): Promise<string | undefined> {
    switch (message.kind) {
      case 'invalid': return Promise.resolve(invalidMessage(message.id, message.error))
      case 'response': return Promise.resolve(undefined)
      case 'notification':
        // spec cancellation: unknown or finished ids are ignored.
        if (message.method === 'notifications/cancelled') this.inflight.get(message.params.requestId as RequestId)?.abort(new Error('cancelled by client'), 'cancel')
        return Promise.resolve(undefined)
    }
    const route = routeMessage(message)
    if (route.era === 'reject') return Promise.resolve(rejected(route.id, route.error).message)
    if (route.era === 'legacy' || route.envelope === undefined) {
      // This connection speaks 2026-07-28: a request without an envelope is either a removed method or incomplete.
      return Promise.resolve(MODERN_METHODS.has(message.method)
        ? errorMessage(message.id, toRpcError(new APP_ERR_INVALID_PARAMS('this connection speaks protocol 2026-07-28: params._meta must carry io.modelcontextprotocol/protocolVersion and io.modelcontextprotocol/clientCapabilities')))
        : errorMessage(message.id, toRpcError(new APP_ERR_UNKNOWN_METHOD(`${message.method.slice(0, 100)} (this connection speaks protocol 2026-07-28)`))))
    }
    return serveModern(this.shared, message, route.envelope, this.context)
  }
}
