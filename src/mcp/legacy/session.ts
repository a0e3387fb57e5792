import { APP_ERR_INVALID_PARAMS, APP_ERR_INVALID_REQUEST, APP_ERR_NOT_INITIALIZED, APP_ERR_UNKNOWN_METHOD } from '../../base/errors.js'
import type { Logger } from '../../base/logger.js'
import type { RequestChannel, Send } from '../wire/channel.js'
import { ClientRequests } from './client-requests.js'
import { methodsOf } from '../methods.js'
import type { LegacyScope } from '../method-types.js'
import { errorMessage, LATEST_PROTOCOL_VERSION, LOG_LEVELS, resultJson, resultMessage, RPC_ERROR, SUPPORTED_PROTOCOL_VERSIONS, toRpcError, type RequestId } from '../wire/rpc.js'
import type { ServerShared } from '../engine-state.js'
import type { CallHandle } from '../call/call-handle.js'
import type { Services } from '../../services/index.js'
import { classify, invalidMessage, type Classified } from '../wire/wire.js'
import { connectionOwner, NO_OWNER, type TaskOwner } from '../tasks/task-store.js'

/** Per-session options. */
export interface SessionOptions {
  log: Logger
  /** Session-wide outbound channel (stdio stdout, HTTP GET stream); absent in stateless HTTP. */
  send?: Send
  /** Stateless HTTP: every request stands alone, no initialize required. */
  stateless: boolean
  /** Whose tasks this session's requests create and see (HTTP: its principal and session id). Default: the session alone (stateless: no one). */
  owner?: TaskOwner
}

/** What another process needs to go on serving an initialized session (a shared session store). */
export interface SessionState {
  protocolVersion: string
  clientCapabilities: Record<string, unknown>
  clientInfo: Record<string, unknown>
  /** Index into the MCP log levels the client chose with logging/setLevel. */
  logLevel: number
}

const LEGACY_METHODS = methodsOf('legacy')
/** How long a tool call waits for the client's roots/list before the session is served as configured. */
const ROOTS_TIMEOUT_MS = 5000

/** One 2025-era connection: its lifecycle, negotiated state, running calls and server→client requests. */
export class Session implements LegacyScope {
  readonly era = 'legacy'
  initialized = false
  protocolVersion = LATEST_PROTOCOL_VERSION
  clientCapabilities: Record<string, unknown> = {}
  clientInfo: Record<string, unknown> = {}
  /** Lowest MCP log level the client wants (index into LOG_LEVELS), set by logging/setLevel. */
  logThreshold = 0
  closed = false
  readonly inflight = new Map<RequestId, CallHandle>()
  private readonly requests = new ClientRequests()
  private initializeSeen = false
  // Created on first use: stateless HTTP opens a session per POST, and an AbortController costs µs on Node 20.
  private shutdown: AbortController | undefined = undefined
  /** What the client's roots leave visible: asked on the first tool call, again after roots/list_changed. */
  private visible: Promise<Services | undefined> | undefined = undefined
  private taskOwner: TaskOwner | undefined = undefined

  constructor (readonly shared: ServerShared, private readonly options: SessionOptions) {
    if (options.stateless) this.initialized = true
  }

  get log (): Logger {
    return this.options.log
  }

  get send (): Send | undefined {
    return this.options.send
  }

  /** Whose tasks this session creates and sees; made on first use (most sessions never start a task). */
  get owner (): TaskOwner {
    this.taskOwner ??= this.options.owner ?? (this.options.stateless ? NO_OWNER : connectionOwner())
    return this.taskOwner
  }

  /** Handles one parsed message; resolves to the serialized response, or undefined when none is due. */
  handle (message: unknown, channel?: RequestChannel): Promise<string | undefined> {
    return this.dispatch(classify(message), channel)
  }

  /** Handles one classified message (the HTTP transport classifies first to pick its status). */
  async dispatch (message: Classified, channel?: RequestChannel): Promise<string | undefined> {
    switch (message.kind) {
      case 'invalid': return invalidMessage(message.id, message.error)
      case 'response':
        this.requests.settle(message.id, message.result, message.error)
        return undefined
      case 'notification':
        this.handleNotification(message.method, message.params)
        return undefined
    }
    const { id, method } = message
    try {
      return await this.handleRequest(id, method, message.params, channel)
    } catch (err) {
      const rpc = toRpcError(err)
      if (rpc.code === RPC_ERROR.InternalError) this.log.error({ err, method }, 'request failed')
      return errorMessage(id, rpc)
    }
  }

  /** The negotiated state, for a shared store (another replica restores it). */
  snapshot (): SessionState {
    return { protocolVersion: this.protocolVersion, clientCapabilities: this.clientCapabilities, clientInfo: this.clientInfo, logLevel: this.logThreshold }
  }

  /** Takes over a session initialized elsewhere: no initialize is due, and none is accepted. */
  restore (state: SessionState): void {
    this.protocolVersion = state.protocolVersion
    this.clientCapabilities = state.clientCapabilities
    this.clientInfo = state.clientInfo
    this.logThreshold = state.logLevel
    this.initialized = true
    this.initializeSeen = true
  }

  /** Aborts every in-flight call and rejects pending server→client requests. */
  close (): void {
    if (this.closed) return
    this.closed = true
    const reason = new Error('session closed')
    this.shutdown?.abort(reason)
    for (const call of this.inflight.values()) call.abort(reason, 'cancel')
    this.requests.rejectAll(reason)
  }

  /** Aborted when the session closes (for resource and prompt readers). */
  get closedSignal (): AbortSignal {
    if (this.shutdown === undefined) {
      this.shutdown = new AbortController()
      if (this.closed) this.shutdown.abort(new Error('session closed'))
    }
    return this.shutdown.signal
  }

  /** Number of requests still running. */
  get inflightCount (): number {
    return this.inflight.size
  }

  /** initialize (spec lifecycle): the first request of a session, once; answers the negotiated version and capabilities. */
  initialize (params: Record<string, unknown>): Record<string, unknown> {
    if (this.initializeSeen) throw new APP_ERR_INVALID_REQUEST('the session is already initialized')
    const requested = params.protocolVersion
    // spec lifecycle: both are required; a session must not start on a request that names neither.
    if (typeof requested !== 'string') throw new APP_ERR_INVALID_PARAMS('initialize: protocolVersion must be a string, e.g. "2025-11-25"')
    if (typeof params.capabilities !== 'object' || params.capabilities === null || Array.isArray(params.capabilities)) {
      throw new APP_ERR_INVALID_PARAMS('initialize: capabilities must be an object (empty when the client offers none)')
    }
    // spec lifecycle: answer the client's version when supported, else our latest.
    this.protocolVersion = SUPPORTED_PROTOCOL_VERSIONS.includes(requested) ? requested : LATEST_PROTOCOL_VERSION
    this.clientCapabilities = params.capabilities as Record<string, unknown>
    this.clientInfo = (params.clientInfo ?? {}) as Record<string, unknown>
    this.initialized = true
    this.initializeSeen = true
    const { shared } = this
    const result: Record<string, unknown> = { protocolVersion: this.protocolVersion, capabilities: shared.capabilities, serverInfo: shared.info }
    if (shared.instructions !== undefined) result.instructions = shared.instructions
    return result
  }

  /** logging/setLevel: notifications below `level` are no longer sent. */
  setLogLevel (level: unknown): void {
    const index = LOG_LEVELS.indexOf(level as string)
    if (index < 0) throw new APP_ERR_INVALID_PARAMS(`level must be one of ${LOG_LEVELS.join(', ')}`)
    this.logThreshold = index
  }

  /** A 2025 result goes out as it is. */
  reply (id: RequestId, _method: string, result: object): string {
    return resultMessage(id, result)
  }

  /** A serialized 2025 result goes out as it is. */
  replyJson (id: RequestId, _method: string, json: string): string {
    return resultJson(id, json)
  }

  /** A 2025 client takes a task when its call asks for one (params.task, the task metadata). */
  acceptsTask (params: Record<string, unknown>): boolean {
    return typeof params.task === 'object' && params.task !== null && !Array.isArray(params.task)
  }

  /**
   * The services this session's client roots leave visible, when the server narrows by them and the client
   * declared `roots`: one roots/list, shared by the calls that wait for it. A client that fails to answer
   * (an error, or nothing within ROOTS_TIMEOUT_MS) is served as configured; roots only ever narrow.
   */
  visibleServices (send: Send | undefined): Promise<Services | undefined> | undefined {
    const narrow = this.shared.narrow
    if (narrow === undefined || this.clientCapabilities.roots === undefined) return undefined
    this.visible ??= this.request('roots/list', {}, AbortSignal.any([this.closedSignal, AbortSignal.timeout(ROOTS_TIMEOUT_MS)]), send)
      .then(async answer => await narrow(Array.isArray(answer.roots) ? answer.roots.map((r: { uri?: unknown } | null) => r?.uri) : []))
      .catch((err: unknown) => {
        this.log.warn({ err }, 'roots/list failed: this session is served the configured roots')
        return undefined
      })
    return this.visible
  }

  /** Sends a server→client request for a running call (its context's client.request). */
  request (method: string, params: Record<string, unknown>, signal: AbortSignal, send: Send | undefined): Promise<Record<string, unknown>> {
    return this.requests.send(method, params, this.clientCapabilities, signal, send)
  }

  private handleRequest (id: RequestId, method: string, params: Record<string, unknown>, channel?: RequestChannel): string | undefined | Promise<string | undefined> {
    const entry = LEGACY_METHODS.get(method)
    // spec lifecycle: before initialize only initialize and ping are answered.
    if (!this.initialized && entry?.beforeInitialize !== true) throw new APP_ERR_NOT_INITIALIZED(`'${method}' before initialize`)
    if (entry === undefined) throw new APP_ERR_UNKNOWN_METHOD(method)
    return entry.handle({ id, method, params, channel, scope: this })
  }

  private handleNotification (method: string, params: Record<string, unknown>): void {
    if (method === 'notifications/cancelled') {
      // spec cancellation: unknown or finished ids are ignored (the race is normal).
      this.inflight.get(params.requestId as RequestId)?.abort(new Error(typeof params.reason === 'string' ? params.reason : 'cancelled by client'), 'cancel')
    } else if (method === 'notifications/roots/list_changed') {
      // The next tool call asks again; calls already running keep what they were given.
      this.visible = undefined
    }
  }
}
