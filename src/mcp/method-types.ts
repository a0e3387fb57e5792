import type { ToolInput } from '../tool-api/define-tool.js'
import type { CallScope } from './call/call-handle.js'
import type { RequestChannel } from './wire/channel.js'
import type { ServerShared } from './engine-state.js'
import type { RequestId } from './wire/rpc.js'

// What method handlers receive, in a leaf of its own: methods.ts dispatches to task-methods.ts and tool-call.ts,
// which need these types, and the session implements LegacyScope without either importing the other's module.

/** A protocol era: `legacy` is initialize and sessions (2024-11-05 … 2025-11-25); `modern` is 2026-07-28 (no handshake, a `_meta` envelope per request). */
export type Era = 'legacy' | 'modern'

/** A request's params. */
export type Params = Record<string, unknown>

/** What a handler sees of the connection, whichever era it speaks. */
export interface Scope extends CallScope {
  readonly era: Era
  readonly shared: ServerShared
  /** Aborted when the connection (or, in the modern era, the request's stream) closes. */
  readonly closedSignal: AbortSignal
  /** Serializes a result the way this era sends it (the modern era adds resultType, identity and cache hints). */
  reply(id: RequestId, method: string, result: object): string
  /** The same for a result already serialized (cached list pages). */
  replyJson(id: RequestId, method: string, json: string): string
}

/** What the modern era's handlers see besides the shared scope. */
export interface ModernScope extends Scope {
  readonly era: 'modern'
  /** server/discover's result. */
  discover(): object
  /** subscriptions/listen: acknowledges and holds the request open until the stream or connection ends. */
  listen(id: RequestId, params: Params, channel: RequestChannel | undefined): Promise<string | undefined>
}

/** One request as a method handler receives it. */
export interface MethodCall<S extends Scope = Scope> {
  id: RequestId
  method: string
  params: Params
  channel: RequestChannel | undefined
  scope: S
  /** A modern retry's answers to the previous round's input requests (SEP-2322). */
  input?: ToolInput
}

/** A handler: the serialized response, or undefined when none is due. */
export type Handler<S extends Scope = Scope> = (call: MethodCall<S>) => string | undefined | Promise<string | undefined>

/** What a 2025-era handler sees: the session (initialize and logging/setLevel exist in that era only). */
export interface LegacyScope extends Scope {
  readonly era: 'legacy'
  /** initialize's result: the negotiated version and capabilities. */
  initialize(params: Params): Record<string, unknown>
  setLogLevel(level: unknown): void
}
