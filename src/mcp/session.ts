import { APP_ERR_INVALID_PARAMS, APP_ERR_INVALID_REQUEST, APP_ERR_NOT_INITIALIZED, APP_ERR_UNKNOWN_METHOD, toolError } from '../errors.js'
import type { Logger } from '../logger.js'
import type { ClientChannel, ToolContext } from '../tools/define-tool.js'
import { CallHandle, callTool } from './dispatch.js'
import { errorMessage, LATEST_PROTOCOL_VERSION, resultJson, resultMessage, RPC_ERROR, SUPPORTED_PROTOCOL_VERSIONS, toRpcError, type RequestId } from './rpc.js'
import { classify, invalidMessage, type Classified } from './wire.js'
import type { ServerShared } from './server.js'

/** Writes one serialized JSON-RPC message (no trailing newline) to the peer. */
export type Send = (message: string) => void

/** Per-session options. */
export interface SessionOptions {
  log: Logger
  /** Session-wide outbound channel (stdio stdout, HTTP GET stream); absent in stateless HTTP. */
  send?: Send
  /** Stateless HTTP: every request stands alone, no initialize required. */
  stateless: boolean
}

/** Where messages related to one request go (HTTP: that POST's SSE stream). */
export interface RequestChannel {
  send: Send
  /** Ends the connection the request's messages travel on, if the transport lets the client resume it (SEP-1699). */
  closeStream?(): void
  /** Fields for the request's log lines (HTTP: request id, principal; never a token). Read only for a line that is written. */
  readonly logFields?: Record<string, unknown>
}

const LOG_LEVELS = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency']

/** What another process needs to go on serving an initialized session (a shared session store). */
export interface SessionState {
  protocolVersion: string
  clientCapabilities: Record<string, unknown>
  clientInfo: Record<string, unknown>
  /** Index into the MCP log levels the client chose with logging/setLevel. */
  logLevel: number
}

type Params = Record<string, unknown>
interface Pending { resolve: (v: Record<string, unknown>) => void, reject: (e: Error) => void }

/** One MCP connection: lifecycle, in-flight requests, cancellation, server→client requests. */
export class Session {
  initialized = false
  protocolVersion = LATEST_PROTOCOL_VERSION
  clientCapabilities: Record<string, unknown> = {}
  clientInfo: Record<string, unknown> = {}
  private logLevel = 0
  private initializeSeen = false
  private readonly inflight = new Map<RequestId, CallHandle>()
  private readonly pending = new Map<RequestId, Pending>()
  private nextOutboundId = 0
  private closed = false
  // Created on first use: stateless HTTP opens a session per POST, and an AbortController costs µs on Node 20.
  private shutdown: AbortController | undefined = undefined

  constructor (private readonly shared: ServerShared, private readonly options: SessionOptions) {
    if (options.stateless) this.initialized = true
  }

  /** Handles one parsed message; resolves to the serialized response, or undefined when none is due. */
  handle (message: unknown, channel?: RequestChannel): Promise<string | undefined> {
    return this.dispatch(classify(message), channel)
  }

  /** Handles one classified message (the HTTP transport classifies first to pick its status). */
  async dispatch (message: Classified, channel?: RequestChannel): Promise<string | undefined> {
    switch (message.kind) {
      case 'invalid': return invalidMessage(message.id, message.error)
      case 'response': return this.handleResponse(message.id, message.result, message.error)
      case 'notification':
        this.handleNotification(message.method, message.params)
        return undefined
    }
    const { id, method } = message
    try {
      return await this.handleRequest(id, method, message.params, channel)
    } catch (err) {
      const rpc = toRpcError(err)
      if (rpc.code === RPC_ERROR.InternalError) this.options.log.error({ err, method }, 'request failed')
      return errorMessage(id, rpc)
    }
  }

  /** The negotiated state, for a shared store (another replica restores it). */
  snapshot (): SessionState {
    return { protocolVersion: this.protocolVersion, clientCapabilities: this.clientCapabilities, clientInfo: this.clientInfo, logLevel: this.logLevel }
  }

  /** Takes over a session initialized elsewhere: no initialize is due, and none is accepted. */
  restore (state: SessionState): void {
    this.protocolVersion = state.protocolVersion
    this.clientCapabilities = state.clientCapabilities
    this.clientInfo = state.clientInfo
    this.logLevel = state.logLevel
    this.initialized = true
    this.initializeSeen = true
  }

  /** Aborts every in-flight call and rejects pending server→client requests. */
  close (): void {
    if (this.closed) return
    this.closed = true
    this.shutdown?.abort(new Error('session closed'))
    for (const handle of this.inflight.values()) handle.abort(new Error('session closed'), 'cancel')
    for (const p of this.pending.values()) p.reject(new Error('session closed'))
    this.pending.clear()
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

  private async handleRequest (id: RequestId, method: string, params: Params, channel?: RequestChannel): Promise<string | undefined> {
    const { shared } = this
    if (method === 'initialize') {
      // spec lifecycle: the first request of a session, once (a stateless session is new for each request).
      if (this.initializeSeen) throw new APP_ERR_INVALID_REQUEST('the session is already initialized')
      const result = this.initialize(params)
      this.initializeSeen = true
      return resultMessage(id, result)
    }
    if (method === 'ping') return resultJson(id, '{}')
    if (!this.initialized) throw new APP_ERR_NOT_INITIALIZED(`'${method}' before initialize`)
    const session = this
    const ctx = { services: shared.registry.services, get signal () { return session.closedSignal } }
    switch (method) {
      case 'tools/list': return resultJson(id, shared.registry.toolsListPage(cursorOf(params)))
      case 'tools/call': return await this.callTool(id, params, channel)
      case 'resources/list': return resultJson(id, shared.features.resourcesList())
      case 'resources/templates/list': return resultJson(id, shared.features.templatesList())
      case 'resources/read': return resultMessage(id, await shared.features.readResource(params, ctx))
      case 'resources/subscribe':
      case 'resources/unsubscribe':
        shared.features.assertResource(params)
        return resultJson(id, '{}')
      case 'prompts/list': return resultJson(id, shared.features.promptsList())
      case 'prompts/get': return resultMessage(id, await shared.features.getPrompt(params, ctx))
      case 'completion/complete': return resultMessage(id, await shared.features.complete(params, ctx))
      case 'logging/setLevel': {
        const level = LOG_LEVELS.indexOf(params.level as string)
        if (level < 0) throw new APP_ERR_INVALID_PARAMS(`level must be one of ${LOG_LEVELS.join(', ')}`)
        this.logLevel = level
        return resultJson(id, '{}')
      }
      default: throw new APP_ERR_UNKNOWN_METHOD(method)
    }
  }

  private initialize (params: Params): Record<string, unknown> {
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
    const { shared } = this
    const result: Record<string, unknown> = { protocolVersion: this.protocolVersion, capabilities: shared.capabilities, serverInfo: shared.info }
    if (shared.instructions !== undefined) result.instructions = shared.instructions
    return result
  }

  private async callTool (id: RequestId, params: Params, channel?: RequestChannel): Promise<string | undefined> {
    const name = params.name
    if (typeof name !== 'string') throw new APP_ERR_INVALID_PARAMS("'name' must be a string")
    if (this.inflight.has(id)) throw new APP_ERR_INVALID_REQUEST(`request id ${JSON.stringify(id)} is already in use`)
    const meta = params._meta as Params | undefined
    const handle = new ToolCall(this, name, channel?.send ?? this.options.send, meta?.progressToken, this.options.log, channel)
    if (this.closed) handle.abort(new Error('session closed'), 'cancel')
    this.inflight.set(id, handle)
    const active = { tool: name, started: Date.now() }
    this.shared.calls.add(active)
    try {
      const result = await callTool(this.shared.registry, name, params.arguments, {
        call: handle,
        timeoutMs: this.shared.toolTimeoutMs,
        callLogLevel: this.shared.callLogLevel,
        channel,
        onCall: this.shared.onCall
      })
      // spec cancellation: no response for a request the client cancelled.
      if (handle.cancelled) return undefined
      return resultMessage(id, result)
    } finally {
      handle.finish()
      this.inflight.delete(id)
      this.shared.calls.delete(active)
    }
  }

  /** Sends a server→client request for a running tool (internal to ToolCall). */
  sendRequest (method: string, params: Record<string, unknown>, signal: AbortSignal, send: Send | undefined): Promise<Record<string, unknown>> {
    const capability = method.startsWith('sampling/') ? 'sampling' : method.startsWith('elicitation/') ? 'elicitation' : method.startsWith('roots/') ? 'roots' : undefined
    if (capability !== undefined && this.clientCapabilities[capability] === undefined) {
      return Promise.reject(toolError('CLIENT_CAPABILITY_MISSING', `the client did not declare the '${capability}' capability, so '${method}' cannot be sent`, 'use a client that supports it'))
    }
    if (send === undefined) {
      return Promise.reject(toolError('CLIENT_CAPABILITY_MISSING', `'${method}' needs a channel back to the client, which stateless HTTP does not have`, 'use stateful mode or stdio'))
    }
    // A call already aborted sends nothing (and so has nothing to cancel).
    if (signal.aborted) return Promise.reject(signal.reason)
    const id = this.nextOutboundId++
    return new Promise((resolve, reject) => {
      const onAbort = (): void => {
        this.pending.delete(id)
        send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason: 'request aborted' } }))
        reject(signal.reason)
      }
      signal.addEventListener('abort', onAbort, { once: true })
      this.pending.set(id, {
        resolve: v => { signal.removeEventListener('abort', onAbort); resolve(v) },
        reject: e => { signal.removeEventListener('abort', onAbort); reject(e) }
      })
      send(JSON.stringify({ jsonrpc: '2.0', id, method, params }))
    })
  }

  /** Lowest MCP log level the client wants (index into LOG_LEVELS). */
  get logThreshold (): number {
    return this.logLevel
  }

  private handleResponse (id: RequestId, result: unknown, error: unknown): undefined {
    const pending = this.pending.get(id)
    if (pending === undefined) return undefined
    this.pending.delete(id)
    if (error !== undefined) {
      const message = String((error as { message?: unknown }).message ?? 'error')
      pending.reject(toolError('CLIENT_REQUEST_FAILED', `the client answered with an error: ${message}`))
    } else {
      pending.resolve(result as Record<string, unknown>)
    }
    return undefined
  }

  private handleNotification (method: string, params: Params): void {
    if (method === 'notifications/cancelled') {
      // spec cancellation: unknown or finished ids are ignored (the race is normal).
      this.inflight.get(params.requestId as RequestId)?.abort(new Error(typeof params.reason === 'string' ? params.reason : 'cancelled by client'), 'cancel')
    }
  }
}

function cursorOf (params: Params): string | undefined {
  const cursor = params.cursor
  if (cursor === undefined || cursor === null) return undefined
  if (typeof cursor !== 'string') throw new APP_ERR_INVALID_PARAMS("'cursor' must be a string")
  return cursor
}

/** One tools/call: its abort handle and the ToolContext `run` receives (methods, not per-call closures). */
class ToolCall extends CallHandle implements ToolContext {
  private lastProgress = -Infinity
  private finished = false

  constructor (
    private readonly session: Session,
    private readonly name: string,
    private readonly send: Send | undefined,
    private readonly progressToken: unknown,
    readonly log: Logger,
    private readonly channel?: RequestChannel
  ) {
    super()
  }

  closeStream (): void {
    this.channel?.closeStream?.()
  }

  get client (): ClientChannel {
    return {
      capabilities: this.session.clientCapabilities,
      request: (method, params) => this.session.sendRequest(method, params, this.signal, this.send)
    }
  }

  /** Marks the call done: later progress is dropped (spec: only while the request runs). */
  finish (): void {
    this.finished = true
  }

  async progress (value: number, total?: number, message?: string): Promise<void> {
    // spec progress: only for a token the client sent, strictly increasing, only while running.
    if (this.send === undefined || this.progressToken === undefined || value <= this.lastProgress || this.finished) return
    this.lastProgress = value
    const params: Params = { progressToken: this.progressToken, progress: value }
    if (total !== undefined) params.total = total
    if (message !== undefined) params.message = message
    this.send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/progress', params }))
  }

  async notify (level: 'debug' | 'info' | 'notice' | 'warning' | 'error', data: unknown): Promise<void> {
    if (this.send === undefined || LOG_LEVELS.indexOf(level) < this.session.logThreshold) return
    this.send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { level, logger: this.name, data } }))
  }
}
