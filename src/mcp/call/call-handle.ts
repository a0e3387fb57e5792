import type { Logger } from '../../base/logger.js'
import type { Services } from '../../services/index.js'
import type { RequestId } from '../wire/rpc.js'
import type { Send } from '../wire/channel.js'
import type { ServerShared } from '../engine-state.js'
import type { TaskOwner } from '../tasks/task-store.js'

// What a running tools/call is to the rest of the engine: the scope it runs in and the handle that aborts it.

/** What a tools/call needs from the connection it arrived on (a 2025 session or a modern request). */
export interface CallScope {
  /** `legacy` fulfils a tool's input requests itself; `modern` returns them to the client. */
  readonly era: 'legacy' | 'modern'
  readonly shared: ServerShared
  readonly log: Logger
  /** The connection's own channel, for a request that has none of its own. */
  readonly send: Send | undefined
  readonly closed: boolean
  /** Running calls by request id, where notifications/cancelled finds them. */
  readonly inflight: Map<RequestId, CallHandle>
  readonly clientCapabilities: Record<string, unknown>
  /** Whose tasks this connection's requests create and may see: its principal and, where it has one, its session. */
  readonly owner: TaskOwner
  /** Lowest MCP log level the client wants (index into LOG_LEVELS). */
  readonly logThreshold: number
  /** Sends a server→client request on `send` for a call whose signal is `signal`. */
  request(method: string, params: Record<string, unknown>, signal: AbortSignal, send: Send | undefined): Promise<Record<string, unknown>>
  /** Serializes a result the way the connection's era sends it. */
  reply(id: RequestId, method: string, result: object): string
  /** The services this connection may use when its client's roots narrow them (2025 sessions); undefined: the registry's. */
  visibleServices?(send: Send | undefined): Promise<Services | undefined> | undefined
  /** Whether this call's client takes a task for an answer (2025: the session negotiated tasks and the call asks for one; 2026: the tasks extension is declared). */
  acceptsTask?(params: Record<string, unknown>): boolean
}

/**
 * The engine's side of one running call. Aborting goes through abort(), which also settles the race
 * directly: on Node 20 an abort listener costs more than the rest of a small call.
 */
export class CallHandle {
  /** Set when the client cancelled or the session closed (no response is due). */
  cancelled = false
  timedOut = false
  /** Set when the server stopped the call to shut down (the answer says so). */
  shutDown = false
  /** Why the call was aborted, once it was. */
  reason: Error | undefined = undefined
  /** Rejects the call's race; installed while the tool runs. */
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
  abort (reason: Error, kind: 'cancel' | 'timeout' | 'shutdown'): void {
    if (this.reason !== undefined) return
    this.reason = reason
    if (kind === 'timeout') this.timedOut = true
    else if (kind === 'shutdown') this.shutDown = true
    else this.cancelled = true
    this.controller?.abort(reason)
    this.onAbort?.(reason)
  }
}
