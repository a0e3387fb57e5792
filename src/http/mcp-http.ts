import type { ServerResponse } from 'node:http'
import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import {
  APP_ERR_INVALID_REQUEST, APP_ERR_METHOD_NOT_ALLOWED, APP_ERR_NOT_ACCEPTABLE, APP_ERR_PROTOCOL_VERSION,
  APP_ERR_SHUTTING_DOWN, APP_ERR_STREAM_CONFLICT
} from '../base/errors.js'
import type { Logger } from '../base/logger.js'
import { SUPPORTED_PROTOCOL_VERSIONS } from '../mcp/wire/rpc.js'
import type { McpServer } from '../mcp/server.js'
import type { RequestChannel, Send } from '../mcp/wire/channel.js'
import type { Session } from '../mcp/legacy/session.js'
import { routeMessage, type Envelope, type RoutingHeaders } from '../mcp/era.js'
import { rejected } from '../mcp/modern/handler.js'
import { classify, invalidMessage, type Classified } from '../mcp/wire/wire.js'
import { settledWithin } from '../mcp/idle.js'
import { systemClock, type Clock } from '../services/clock.js'
import { createMemoryEventStore, type EventStore } from './event-store.js'
import { EventStream, newStreamId, streamOfEventId } from './event-stream.js'
import { createSessionTable, principalOf, taskOwnerOf, type HttpSession, type SessionTableOptions } from './http-sessions.js'
import type { SessionStore } from './session-store.js'
import { useMessageParser } from './json-body.js'
import { createRequestSlots } from './request-slots.js'
import { acceptsEventStream, acceptsJson, endStream, openEventStream, writeEvent } from './sse.js'

export { principalOf } from './http-sessions.js'

/** Options for the Streamable HTTP endpoint (spec 2025-11-25 basic/transports). */
export interface McpHttpOptions {
  /** The engine; every session is opened on it (stdio serves the same one). */
  server: McpServer
  /** `stateful`: sessions, SSE GET stream, DELETE. `stateless`: a fresh session per POST; GET/DELETE → 405. */
  mode: 'stateful' | 'stateless'
  /** Endpoint path. Default `'/mcp'`. */
  path?: string
  /**
   * Registers what protects the endpoint (auth, rate limit, load shedding) in the context that holds its
   * routes and nothing else, before they are added: its hooks run for every request routed here.
   */
  guard?: (endpoint: FastifyInstance) => Promise<void>
  /** Stateful only: most concurrent sessions; beyond it initialize gets 503 + Retry-After. Default 1000. */
  maxSessions?: number
  /** Stateful only: a session without requests for this long expires (later use → 404). Default 30 min. */
  sessionIdleMs?: number
  /**
   * Most POSTs answered at once, each counted once its body has arrived; beyond it a POST gets 503 + Retry-After
   * (before its body is read when every slot is already taken). Default 256.
   */
  maxInflightRequests?: number
  /** Longest a POST's body may take to arrive after its headers, ms; a later one gets 408 and its connection closes. Default 10000. */
  bodyTimeoutMs?: number
  /** Stateful only: sessions one client (principal) may hold; beyond it initialize gets 429 + Retry-After. Default 100. */
  maxSessionsPerClient?: number
  /** Stateful only: where SSE events are kept for resumption. Default: in this process, bounded. */
  events?: EventStore
  /** Stateful only: sessions shared with other replicas (Redis). Default: none, sessions live here. */
  sessions?: SessionStore
  /** With shared sessions: how often one served here is checked against the store, ms. Default 5000. */
  sessionCheckMs?: number
  /** Where a shared session store that fails is reported (component `session-store`), and its recovery. */
  degradations: SessionTableOptions['degradations']
  /** Stateful only: what idle expiry measures time by (a test's own clock). Default: the system clock. */
  clock?: Clock
}

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * Drains the endpoint: new requests get 503 (the listener stays open, so probes still see /readyz
     * answer 503), GET streams end, and POSTs in flight may finish. Resolves true when none is left
     * within `graceMs`, false otherwise.
     */
    mcpDrain(graceMs: number): Promise<boolean>
    /** True once draining began (mcpDrain or close). */
    readonly mcpDraining: boolean
    /** Live stateful sessions here, POSTs being answered now, and POSTs whose body is still arriving (metrics). */
    mcpStats(): { sessions: number, inflight: number, receiving: number }
  }
}

const SUPPORTED = new Set(SUPPORTED_PROTOCOL_VERSIONS)

function checkProtocolVersion (request: FastifyRequest): void {
  const version = request.headers['mcp-protocol-version']
  // spec basic/transports: absent → assume the negotiated (or 2025-03-26) version; unsupported → 400.
  if (version !== undefined && !SUPPORTED.has(version as string)) {
    throw new APP_ERR_PROTOCOL_VERSION(`${String(version).slice(0, 40)} (supported: ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')})`)
  }
}

const PARAM_PREFIX = 'mcp-param-'

/** The 2026-07-28 routing headers (RFC 9110: surrounding whitespace is not part of a field value). */
function routingHeaders (request: FastifyRequest): RoutingHeaders {
  const { headers } = request
  const one = (name: string): string | undefined => {
    const value = headers[name]
    return typeof value === 'string' ? value.trim() : undefined
  }
  return {
    protocolVersion: one('mcp-protocol-version'),
    method: one('mcp-method'),
    name: one('mcp-name'),
    // Gathered only when read: just a call to a tool with header parameters does, and most requests name none.
    get params () {
      let params: Record<string, string> | undefined
      for (const name of Object.keys(headers)) {
        const value = headers[name]
        if (name.startsWith(PARAM_PREFIX) && typeof value === 'string') (params ??= {})[name.slice(PARAM_PREFIX.length)] = value
      }
      return params
    }
  }
}

/**
 * Messages related to one POSTed request (progress, logging, server→client requests). The reply stays
 * plain JSON until the first such message; then, if the client accepts SSE, it becomes an SSE stream
 * that ends with the response. Otherwise they go to the session's GET stream, if any.
 */
class PostChannel implements RequestChannel {
  stream: EventStream | undefined = undefined
  readonly send: Send

  constructor (private readonly reply: FastifyReply, fallback: Send | undefined, private readonly newStream: () => EventStream) {
    this.send = (message) => {
      if (this.stream === undefined && !this.startStream()) {
        fallback?.(message)
        return
      }
      this.stream?.send(message)
    }
  }

  /** The request id and principal on the call's log lines (never the token); built only for a line that is written. */
  get logFields (): Record<string, unknown> {
    return { reqId: this.reply.request.id, principal: principalOf(this.reply.request).id }
  }

  /** Turns the reply into an SSE stream; false when the client cannot take one. */
  private startStream (): boolean {
    const raw = this.reply.raw
    if (raw.destroyed || !acceptsEventStream(this.reply.request.headers.accept)) return false
    this.reply.hijack()
    this.stream = this.newStream()
    this.stream.open(raw, false)
    return true
  }

  /** SEP-1699: ends the POST's connection mid-call; the rest (the response too) waits for GET + Last-Event-ID. */
  closeStream (): void {
    if (this.stream === undefined && !this.startStream()) return
    if (this.stream?.resumable === true) this.stream.detach()
  }
}

/** Streamable HTTP on one path: POST for messages, GET for the session stream, DELETE to end a session. */
const mcpHttp: FastifyPluginAsync<McpHttpOptions> = async (app, options) => {
  const { server, mode, guard, path = '/mcp', maxSessions = 1000, sessionIdleMs = 1_800_000, maxInflightRequests = 256, bodyTimeoutMs = 10_000, maxSessionsPerClient = 100, clock = systemClock } = options
  const stateless = mode === 'stateless'
  const log = app.log as Logger
  const events = options.events ?? createMemoryEventStore()
  const table = createSessionTable({ server, log, maxSessions, maxSessionsPerClient, sessionIdleMs, events, store: options.sessions, checkMs: options.sessionCheckMs, degradations: options.degradations, clock })
  const slots = createRequestSlots({ maxInflight: maxInflightRequests, bodyTimeoutMs })
  let closing = false

  const sendJson = (reply: FastifyReply, status: number, body: string): FastifyReply =>
    reply.code(status).type('application/json').send(body)

  async function answer (session: Session, message: Classified, reply: FastifyReply, entry?: HttpSession): Promise<FastifyReply | undefined> {
    if (message.kind !== 'request') {
      await session.dispatch(message)
      // spec basic/transports: an accepted notification or response → 202 with no body.
      return reply.code(202).send()
    }
    // Only a session's streams can be resumed (a stateless POST has no session to resume on).
    const channel = new PostChannel(reply, entry?.standalone?.send.bind(entry.standalone), () => new EventStream(entry?.id ?? '', newStreamId(), entry === undefined ? undefined : events))
    const out = await session.dispatch(message, channel)
    if (channel.stream !== undefined) {
      if (out !== undefined) channel.stream.send(out, true)
      endStream(reply.raw)
      return undefined
    }
    // A cancelled request has no response (spec utilities/cancellation); end the POST cleanly.
    if (out === undefined) return reply.code(202).send()
    return sendJson(reply, 200, out)
  }

  /** A 2026-07-28 request: no session, its own response stream, cancelled when that stream closes. */
  async function answerModern (message: Classified, envelope: Envelope | undefined, headers: RoutingHeaders, reply: FastifyReply): Promise<FastifyReply | undefined> {
    // Modern notifications need nothing here: a request is cancelled by closing its stream.
    if (message.kind !== 'request' || envelope === undefined) return reply.code(202).send()
    const channel = new PostChannel(reply, undefined, () => new EventStream('', newStreamId(), undefined))
    // No session in this era: a task is its principal's; without auth its unguessable id is the only way to it.
    const { answer: answered, close } = server.answerModern(message, envelope, { log, headers, channel, owner: taskOwnerOf(reply.request) })
    reply.raw.once('close', () => { if (!reply.raw.writableFinished) close() })
    const { message: out, status } = await answered
    if (channel.stream !== undefined) {
      if (out !== undefined) channel.stream.send(out, true)
      endStream(reply.raw)
      return undefined
    }
    // Cancelled (the client closed the stream): nothing is due, and nobody is listening.
    if (out === undefined) return reply.code(202).send()
    return sendJson(reply, status, out)
  }

  const closingError = (): Error => Object.assign(new APP_ERR_SHUTTING_DOWN(), { headers: { 'retry-after': '1', connection: 'close' } })

  const notAllowed = (allow: string) => (request: FastifyRequest, reply: FastifyReply): never => {
    reply.header('allow', allow)
    throw new APP_ERR_METHOD_NOT_ALLOWED(request.method)
  }
  // RFC 9110 §9.3.7: OPTIONS says which methods the endpoint takes (no CORS: browsers on other origins stay refused).
  const allowed = (allow: string) => (_request: FastifyRequest, reply: FastifyReply): FastifyReply => reply.code(204).header('allow', allow).send()

  /** Serves the GET stream on `raw` from now on; it ends when the client goes. */
  function holdStandalone (entry: HttpSession, raw: ServerResponse): void {
    entry.connection = raw
    raw.once('close', () => {
      if (entry.connection !== raw) return
      entry.connection = undefined
      entry.standalone?.detach()
      // Idle time counts from when the stream went away.
      entry.lastSeen = clock.now()
    })
  }

  /**
   * GET + Last-Event-ID (spec basic/transports, Resumability): replays the stream that event belongs to
   * from the event store and follows it — a POST's stream until its response, the GET stream for good.
   * False when the store does not know that event (nothing was written).
   */
  async function resume (entry: HttpSession, lastEventId: string, raw: ServerResponse): Promise<boolean> {
    const stream = streamOfEventId(lastEventId)
    if (stream === undefined) return false
    const isStandalone = stream === entry.standalone?.id
    const gone = new AbortController()
    let opened = false
    const open = (): void => {
      if (opened) return
      opened = true
      openEventStream(raw, true)
    }
    const known = await events.follow(entry.id, stream, lastEventId, (event) => {
      open()
      // A priming event is its stream's first and follow() hands over only later ones; a store that broke
      // that order must still not write an empty event.
      /* c8 ignore next */
      if (event.message === '') return true
      // The live GET stream writes to its connection itself once attached below.
      writeEvent(raw, event.message, event.id)
      if (event.final === true) {
        endStream(raw)
        return false
      }
      return true
    }, gone.signal)
    if (!known) return false
    open()
    if (isStandalone && entry.standalone !== undefined) {
      gone.abort()
      entry.standalone.attach(raw)
      holdStandalone(entry, raw)
    } else {
      raw.once('close', () => gone.abort())
    }
    return true
  }

  // The endpoint's routes live in a context of their own, holding what guards them (auth, limits, load
  // shedding) and nothing else: its hooks run for every spelling the router accepts for these routes.
  await app.register(async (endpoint) => {
    if (guard !== undefined) await guard(endpoint)
    useMessageParser(endpoint)

    // A POST takes an in-flight slot once its body has arrived, so clients stalling their bodies hold none (request-slots.ts).
    endpoint.post(path, { onRequest: slots.onRequest, preParsing: slots.preParsing, preValidation: slots.preValidation }, async (request, reply) => {
      // spec basic/transports: a POST's Accept lists application/json and text/event-stream; a client
      // that cannot take JSON cannot read most answers. (One that cannot take SSE is still served JSON.)
      if (!acceptsJson(request.headers.accept)) throw new APP_ERR_NOT_ACCEPTABLE('a POST must accept application/json (and text/event-stream)')
      const message = classify(request.body)
      // While draining, notifications and responses still reach their session (a cancellation, an elicitation answer).
      if (closing && message.kind === 'request') throw closingError()
      if (message.kind === 'invalid') return sendJson(reply, 400, invalidMessage(message.id, message.error))
      const headers = routingHeaders(request)
      const route = routeMessage(message, headers)
      if (route.era === 'reject') {
        const out = rejected(route.id, route.error)
        return sendJson(reply, out.status, out.message as string)
      }
      if (route.era === 'modern') return answerModern(message, route.envelope, headers, reply)
      checkProtocolVersion(request)
      if (stateless) {
        const session = server.openSession({ stateless: true, log, owner: taskOwnerOf(request) })
        // No session to come back to: a client that hangs up cancels its call (its ripgrep is killed).
        // (Stateful calls outlive the connection, bounded by their deadline: the client may resume.)
        reply.raw.once('close', () => { if (!reply.raw.writableFinished) session.close() })
        return answer(session, message, reply)
      }
      if (request.headers['mcp-session-id'] === undefined && message.kind === 'request' && message.method === 'initialize') {
        // Only a tools/call can end without an answer (cancelled): initialize always gets one.
        const { entry, out } = await table.open(request, async session => await session.dispatch(message) as string)
        // spec basic/transports Session Management: the id goes on the response carrying InitializeResult.
        if (entry !== undefined) reply.header('mcp-session-id', entry.id)
        return sendJson(reply, 200, out)
      }
      const entry = await table.lookup(request)
      entry.lastSeen = clock.now()
      if (message.kind === 'request' && message.method === 'initialize') {
        // spec lifecycle: initialize is the first request of a session, once.
        return sendJson(reply, 400, invalidMessage(message.id, new APP_ERR_INVALID_REQUEST('this session is already initialized; send initialize without Mcp-Session-Id to open a new one')))
      }
      try {
        return await answer(entry.session, message, reply, entry)
      } finally {
        entry.lastSeen = clock.now()
        table.persist(entry)
      }
    })

    if (stateless) {
      endpoint.options(path, allowed('POST, OPTIONS'))
      endpoint.route({ method: ['GET', 'DELETE', 'PUT', 'PATCH', 'HEAD'], url: path, exposeHeadRoute: false, handler: notAllowed('POST, OPTIONS') })
    } else {
      endpoint.get(path, { exposeHeadRoute: false }, async (request, reply) => {
        if (closing) throw closingError()
        checkProtocolVersion(request)
        if (!acceptsEventStream(request.headers.accept)) throw new APP_ERR_NOT_ACCEPTABLE('the GET stream is text/event-stream; send Accept: text/event-stream')
        const entry = await table.lookup(request)
        entry.lastSeen = clock.now()
        const lastEventId = request.headers['last-event-id']
        const resuming = typeof lastEventId === 'string' && lastEventId !== ''
        // spec basic/transports Multiple Connections: each message goes to one stream, so one GET stream per session.
        if (!resuming && entry.connection !== undefined && !entry.connection.destroyed) throw new APP_ERR_STREAM_CONFLICT()
        reply.hijack()
        const raw = reply.raw
        if (resuming && await resume(entry, lastEventId, raw)) return
        // A new GET stream (or one the store no longer knows): fresh ids from a new priming event.
        if (entry.connection !== undefined && !entry.connection.destroyed) endStream(entry.connection)
        entry.standalone = new EventStream(entry.id, newStreamId(), events)
        entry.standalone.open(raw, true)
        holdStandalone(entry, raw)
      })
      endpoint.delete(path, async (request, reply) => {
        checkProtocolVersion(request)
        table.terminate(await table.lookup(request), 'deleted')
        return reply.code(200).send()
      })
      endpoint.options(path, allowed('GET, POST, DELETE, OPTIONS'))
      endpoint.route({ method: ['PUT', 'PATCH', 'HEAD'], url: path, handler: notAllowed('GET, POST, DELETE, OPTIONS') })

      const sweeper = setInterval(() => table.sweep(), Math.max(50, Math.min(15_000, Math.floor(sessionIdleMs / 2))))
      sweeper.unref()
      endpoint.addHook('onClose', async () => { clearInterval(sweeper) })
    }
  })

  /** Stops taking new requests and ends GET streams; POSTs in flight are left to finish. */
  function startDraining (): void {
    closing = true
    server.endSubscriptions()
    // Open GET streams would hold server.close() forever.
    for (const entry of table.values()) {
      if (entry.connection !== undefined) endStream(entry.connection)
      entry.connection = undefined
    }
  }

  app.decorate('mcpDrain', async (graceMs: number): Promise<boolean> => {
    startDraining()
    // A body still arriving is waited for too: it is then answered (503 for a request) rather than cut off.
    return await settledWithin(slots.idle(), graceMs)
  })
  app.decorate('mcpDraining', { getter: () => closing })
  app.decorate('mcpStats', () => ({ sessions: table.count(), inflight: slots.inflight, receiving: slots.receiving }))
  app.addHook('preClose', async () => { startDraining() })
  app.addHook('onClose', async () => {
    slots.close()
    table.closeAll()
    await events.close()
  })
}

export default fp(mcpHttp, { name: 'mcp-http', fastify: '5.x', dependencies: ['rpc-errors', 'origin-guard'] })
