import { randomUUID } from 'node:crypto'
import type { ServerResponse } from 'node:http'
import fp from 'fastify-plugin'
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import {
  APP_ERR_CLIENT_SESSION_LIMIT, APP_ERR_INVALID_REQUEST, APP_ERR_METHOD_NOT_ALLOWED, APP_ERR_NOT_ACCEPTABLE, APP_ERR_OVERLOADED, APP_ERR_PROTOCOL_VERSION, APP_ERR_SESSION_LIMIT,
  APP_ERR_SESSION_NOT_FOUND, APP_ERR_SESSION_REQUIRED, APP_ERR_SHUTTING_DOWN, APP_ERR_STREAM_CONFLICT
} from '../src/errors.js'
import type { Logger } from '../src/logger.js'
import { SUPPORTED_PROTOCOL_VERSIONS } from '../src/mcp/rpc.js'
import type { McpServer } from '../src/mcp/server.js'
import type { RequestChannel, Send, Session } from '../src/mcp/session.js'
import { classify, invalidMessage, parseMessage, type Classified } from '../src/mcp/wire.js'
import type { Principal } from './auth.js'
import { acceptsEventStream, acceptsJson, endStream, openEventStream, writeComment, writeEvent } from './sse.js'

/** Options for the Streamable HTTP endpoint (spec 2025-11-25 basic/transports). */
export interface McpHttpOptions {
  /** The engine; every session is opened on it (stdio serves the same one). */
  server: McpServer
  /** `stateful`: sessions, SSE GET stream, DELETE. `stateless`: a fresh session per POST; GET/DELETE → 405. */
  mode: 'stateful' | 'stateless'
  /** Endpoint path. Default `'/mcp'`. */
  path?: string
  /** Stateful only: most concurrent sessions; beyond it initialize gets 503 + Retry-After. Default 1000. */
  maxSessions?: number
  /** Stateful only: a session without requests for this long expires (later use → 404). Default 30 min. */
  sessionIdleMs?: number
  /** Most POSTs handled at once; beyond it a POST gets 503 + Retry-After before its body is read. Default 256. */
  maxInflightRequests?: number
  /** Stateful only: sessions one client (principal) may hold; beyond it initialize gets 429 + Retry-After. Default 100. */
  maxSessionsPerClient?: number
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
  }
}

/** Who a request acts for: the authenticated principal, else the client's address (behind trusted proxies: the forwarded one). */
export function principalOf (request: FastifyRequest): Principal {
  return request.principal ?? { id: `ip:${request.ip}`, kind: 'anonymous' }
}

/** One stateful session as the HTTP layer keeps it. */
interface HttpSession {
  id: string
  session: Session
  /** The principal that opened it: only that principal may use it (when authenticated). */
  principal: Principal
  lastSeen: number
  /** The GET SSE stream, while one is open. */
  stream: ServerResponse | undefined
  /** Writes to the GET stream; messages with nowhere to go are dropped (nothing waits for them). */
  send: Send
}

const SUPPORTED = new Set(SUPPORTED_PROTOCOL_VERSIONS)

function checkProtocolVersion (request: FastifyRequest): void {
  const version = request.headers['mcp-protocol-version']
  // spec basic/transports: absent → assume the negotiated (or 2025-03-26) version; unsupported → 400.
  if (version !== undefined && !SUPPORTED.has(version as string)) {
    throw new APP_ERR_PROTOCOL_VERSION(`${String(version).slice(0, 40)} (supported: ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')})`)
  }
}

/**
 * Messages related to one POSTed request (progress, logging, server→client requests). The reply stays
 * plain JSON until the first such message; then, if the client accepts SSE, it becomes an SSE stream
 * that ends with the response. Otherwise they go to the session's GET stream, if any.
 */
class PostChannel implements RequestChannel {
  streaming = false
  readonly send: Send

  constructor (reply: FastifyReply, fallback: Send | undefined) {
    this.send = (message) => {
      if (!this.streaming) {
        if (reply.raw.destroyed || !acceptsEventStream(reply.request.headers.accept)) {
          fallback?.(message)
          return
        }
        reply.hijack()
        openEventStream(reply.raw)
        this.streaming = true
      }
      writeEvent(reply.raw, message)
    }
  }
}

/** Streamable HTTP on one path: POST for messages, GET for the session stream, DELETE to end a session. */
const mcpHttp: FastifyPluginAsync<McpHttpOptions> = async (app, options) => {
  const { server, mode, path = '/mcp', maxSessions = 1000, sessionIdleMs = 1_800_000, maxInflightRequests = 256, maxSessionsPerClient = 100 } = options
  const stateless = mode === 'stateless'
  const log = app.log as Logger
  const sessions = new Map<string, HttpSession>()
  /** Live sessions (and initializes in progress) per principal id. */
  const perClient = new Map<string, number>()
  const countClient = (id: string, delta: number): void => {
    const n = (perClient.get(id) ?? 0) + delta
    if (n <= 0) perClient.delete(id)
    else perClient.set(id, n)
  }
  let reserved = 0
  let closing = false
  let inflight = 0

  // The engine's parser, not Fastify's: the same bytes get the same answer as over stdio
  // (prototype-poisoning keys included). bodyLimit still applies (parseAs buffer).
  app.removeContentTypeParser('application/json')
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_request, body, done) => {
    const parsed = parseMessage(body as Buffer)
    if (parsed.ok) done(null, parsed.message)
    else done(parsed.error as Error & { statusCode: number }, undefined)
  })

  const sendJson = (reply: FastifyReply, status: number, body: string): FastifyReply =>
    reply.code(status).type('application/json').send(body)

  async function answer (session: Session, message: Classified, reply: FastifyReply, fallback?: Send): Promise<FastifyReply | undefined> {
    if (message.kind !== 'request') {
      await session.dispatch(message)
      // spec basic/transports: an accepted notification or response → 202 with no body.
      return reply.code(202).send()
    }
    const channel = new PostChannel(reply, fallback)
    const out = await session.dispatch(message, channel)
    if (channel.streaming) {
      if (out !== undefined) writeEvent(reply.raw, out)
      endStream(reply.raw)
      return undefined
    }
    // A cancelled request has no response (spec utilities/cancellation); end the POST cleanly.
    if (out === undefined) return reply.code(202).send()
    return sendJson(reply, 200, out)
  }

  const retryAfterSeconds = (): string => {
    // The earliest a current session can expire; clients should not hammer a full server.
    let oldest = Infinity
    for (const s of sessions.values()) if (s.session.inflightCount === 0 && s.lastSeen < oldest) oldest = s.lastSeen
    const ms = oldest === Infinity ? sessionIdleMs : oldest + sessionIdleMs - Date.now()
    return String(Math.min(3600, Math.max(1, Math.ceil(ms / 1000))))
  }

  function terminate (entry: HttpSession, reason: string): void {
    if (sessions.delete(entry.id)) countClient(entry.principal.id, -1)
    entry.session.close()
    if (entry.stream !== undefined) endStream(entry.stream)
    entry.stream = undefined
    log.debug({ session: entry.id.slice(0, 8), reason }, 'session ended')
  }

  function lookup (request: FastifyRequest): HttpSession {
    const id = request.headers['mcp-session-id']
    if (id === undefined) throw new APP_ERR_SESSION_REQUIRED()
    const entry = sessions.get(id as string)
    // A session is bound to the principal that opened it (spec security: session hijacking); to anyone
    // else it does not exist. Without auth there is no identity to bind to.
    if (entry === undefined || (entry.principal.kind !== 'anonymous' && entry.principal.id !== principalOf(request).id)) throw new APP_ERR_SESSION_NOT_FOUND()
    return entry
  }

  async function initialize (message: Classified, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> {
    if (sessions.size + reserved >= maxSessions) {
      throw Object.assign(new APP_ERR_SESSION_LIMIT(), { headers: { 'retry-after': retryAfterSeconds() } })
    }
    const principal = principalOf(request)
    // One client cannot take the whole cap: the others still get sessions.
    if ((perClient.get(principal.id) ?? 0) >= maxSessionsPerClient) {
      throw Object.assign(new APP_ERR_CLIENT_SESSION_LIMIT(String(maxSessionsPerClient)), { headers: { 'retry-after': retryAfterSeconds() } })
    }
    const entry = { id: randomUUID(), lastSeen: Date.now(), stream: undefined, principal } as HttpSession
    entry.send = (message) => { if (entry.stream !== undefined) writeEvent(entry.stream, message) }
    entry.session = server.openSession({ send: entry.send, stateless: false, log: log.child({ session: entry.id.slice(0, 8) }) })
    reserved++
    countClient(principal.id, 1)
    let out: string | undefined
    try {
      out = await entry.session.dispatch(message)
    } finally {
      reserved--
    }
    if (!entry.session.initialized || out === undefined) {
      countClient(principal.id, -1)
      return sendJson(reply, 200, out ?? '')
    }
    sessions.set(entry.id, entry)
    // spec basic/transports Session Management: the id goes on the response carrying InitializeResult.
    reply.header('mcp-session-id', entry.id)
    return sendJson(reply, 200, out)
  }

  const closingError = (): Error => Object.assign(new APP_ERR_SHUTTING_DOWN(), { headers: { 'retry-after': '1', connection: 'close' } })

  const overloaded = (): Error => Object.assign(new APP_ERR_OVERLOADED(), { headers: { 'retry-after': '1' } })

  app.post(path, {
    // Before the body is read: a POST that cannot even be queued costs no parsing.
    onRequest: (request, reply, done) => {
      if (inflight >= maxInflightRequests) return done(overloaded())
      inflight++
      reply.raw.once('close', () => { inflight-- })
      done()
    }
  }, async (request, reply) => {
    checkProtocolVersion(request)
    // spec basic/transports: a POST's Accept lists application/json and text/event-stream; a client
    // that cannot take JSON cannot read most answers. (One that cannot take SSE is still served JSON.)
    if (!acceptsJson(request.headers.accept)) throw new APP_ERR_NOT_ACCEPTABLE('a POST must accept application/json (and text/event-stream)')
    const message = classify(request.body)
    // While draining, notifications and responses still reach their session (a cancellation, an elicitation answer).
    if (closing && message.kind === 'request') throw closingError()
    if (message.kind === 'invalid') return sendJson(reply, 400, invalidMessage(message.id, message.error))
    if (stateless) return answer(server.openSession({ stateless: true, log }), message, reply)
    if (request.headers['mcp-session-id'] === undefined && message.kind === 'request' && message.method === 'initialize') {
      return initialize(message, request, reply)
    }
    const entry = lookup(request)
    entry.lastSeen = Date.now()
    if (message.kind === 'request' && message.method === 'initialize') {
      // spec lifecycle: initialize is the first request of a session, once.
      return sendJson(reply, 400, invalidMessage(message.id, new APP_ERR_INVALID_REQUEST('this session is already initialized; send initialize without Mcp-Session-Id to open a new one')))
    }
    try {
      return await answer(entry.session, message, reply, entry.send)
    } finally {
      entry.lastSeen = Date.now()
    }
  })

  const notAllowed = (allow: string) => (request: FastifyRequest, reply: FastifyReply): never => {
    reply.header('allow', allow)
    throw new APP_ERR_METHOD_NOT_ALLOWED(request.method)
  }

  if (stateless) {
    app.route({ method: ['GET', 'DELETE', 'PUT', 'PATCH', 'HEAD', 'OPTIONS'], url: path, exposeHeadRoute: false, handler: notAllowed('POST') })
  } else {
    app.get(path, { exposeHeadRoute: false }, async (request, reply) => {
      if (closing) throw closingError()
      checkProtocolVersion(request)
      if (!acceptsEventStream(request.headers.accept)) throw new APP_ERR_NOT_ACCEPTABLE('the GET stream is text/event-stream; send Accept: text/event-stream')
      const entry = lookup(request)
      // spec basic/transports Multiple Connections: each message goes to one stream, so one GET stream per session.
      if (entry.stream !== undefined && !entry.stream.destroyed) throw new APP_ERR_STREAM_CONFLICT()
      entry.lastSeen = Date.now()
      reply.hijack()
      const raw = reply.raw
      openEventStream(raw, true)
      entry.stream = raw
      raw.once('close', () => {
        if (entry.stream !== raw) return
        entry.stream = undefined
        // Idle time counts from when the stream went away.
        entry.lastSeen = Date.now()
      })
    })
    app.delete(path, async (request, reply) => {
      checkProtocolVersion(request)
      terminate(lookup(request), 'deleted')
      return reply.code(200).send()
    })
    app.route({ method: ['PUT', 'PATCH', 'HEAD', 'OPTIONS'], url: path, handler: notAllowed('GET, POST, DELETE') })

    const sweep = (): void => {
      const now = Date.now()
      for (const entry of sessions.values()) {
        // A client holding its GET stream open is present even when it sends nothing.
        if (now - entry.lastSeen > sessionIdleMs && entry.session.inflightCount === 0 && entry.stream === undefined) terminate(entry, 'idle')
        // Keeps proxies (nginx's 60 s read timeout) from cutting an idle GET stream.
        else if (entry.stream !== undefined) writeComment(entry.stream, 'ping')
      }
    }
    const sweeper = setInterval(sweep, Math.max(50, Math.min(15_000, Math.floor(sessionIdleMs / 2))))
    sweeper.unref()
    app.addHook('onClose', async () => { clearInterval(sweeper) })
  }

  /** Stops taking new requests and ends GET streams; POSTs in flight are left to finish. */
  function startDraining (): void {
    closing = true
    // Open GET streams would hold server.close() forever.
    for (const entry of sessions.values()) {
      if (entry.stream !== undefined) endStream(entry.stream)
      entry.stream = undefined
    }
  }

  app.decorate('mcpDrain', async (graceMs: number): Promise<boolean> => {
    startDraining()
    const until = Date.now() + graceMs
    const busy = (): boolean => inflight > 0
    while (busy() && Date.now() < until) await new Promise(resolve => setTimeout(resolve, 25))
    return !busy()
  })
  app.decorate('mcpDraining', { getter: () => closing })
  app.addHook('preClose', async () => { startDraining() })
  app.addHook('onClose', async () => {
    for (const entry of [...sessions.values()]) terminate(entry, 'shutdown')
  })
}

export default fp(mcpHttp, { name: 'mcp-http', fastify: '5.x', dependencies: ['rpc-errors', 'origin-guard'] })
