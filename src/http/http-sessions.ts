import { randomUUID } from 'node:crypto'
import type { ServerResponse } from 'node:http'
import type { FastifyRequest } from 'fastify'
import { APP_ERR_CLIENT_SESSION_LIMIT, APP_ERR_SESSION_LIMIT, APP_ERR_SESSION_NOT_FOUND, APP_ERR_SESSION_REQUIRED, APP_ERR_SESSION_STORE_UNAVAILABLE } from '../base/errors.js'
import type { Logger } from '../base/logger.js'
import type { Degradations } from '../services/degradations.js'
import { systemClock, type Clock } from '../services/clock.js'
import type { McpServer } from '../mcp/server.js'
import type { Session } from '../mcp/legacy/session.js'
import type { Principal } from './auth.js'
import type { EventStore } from './event-store.js'
import type { EventStream } from './event-stream.js'
import type { SessionRecord, SessionStore } from './session-store.js'
import { NO_OWNER, type TaskOwner } from '../mcp/tasks/task-store.js'
import { endStream, writeComment } from './sse.js'

/** One stateful session as the HTTP layer keeps it. */
export interface HttpSession {
  id: string
  session: Session
  /** The principal that opened it: only that principal may use it (when authenticated). */
  principal: Principal
  lastSeen: number
  /** The GET stream (its events are kept for resumption), while a client holds one open. */
  standalone: EventStream | undefined
  /** The connection serving the GET stream now. */
  connection: ServerResponse | undefined
  /** When the shared store last confirmed the session (and its expiry was pushed back), epoch ms. */
  confirmed: number
  /** The log level last saved to the shared store. */
  savedLogLevel: number
}

/** Options of the session table. */
export interface SessionTableOptions {
  server: McpServer
  log: Logger
  maxSessions: number
  maxSessionsPerClient: number
  sessionIdleMs: number
  /** Keeps SSE events for resumption; told when a session ends. */
  events: EventStore
  /** Shares sessions with other replicas; without it a session lives in this process only. */
  store?: SessionStore
  /** How often a session served here is checked against the shared store (a DELETE or a log level set on another replica), ms. Default 5000. */
  checkMs?: number
  /** Where a shared store that fails is reported (component `session-store`), and its recovery. */
  degradations: Pick<Degradations, 'report' | 'recover'>
  /** What idle expiry and store checks measure time by. Default: the system clock. */
  clock?: Clock
}

const STORE_FAULT = 'the shared session store fails: new sessions, and sessions this replica has not confirmed lately, answer 503; the others keep serving'

/** Who a request acts for: the authenticated principal, else the client's address (behind trusted proxies: the forwarded one). */
export function principalOf (request: FastifyRequest): Principal {
  return request.principal ?? { id: `ip:${request.ip}`, kind: 'anonymous' }
}

/** Whose tasks a request outside any session creates and sees (stateless HTTP, 2026-07-28): its authenticated principal, or no one ('') without auth. */
export function taskOwnerOf (request: FastifyRequest): TaskOwner {
  return request.principal === undefined ? NO_OWNER : { principal: request.principal.id }
}

/**
 * A stateful session's task owner: its principal (unless anonymous) and its id — two sessions of one token may be
 * narrowed to different roots, so neither sees the other's tasks.
 */
const sessionOwner = (principal: Principal, session: string): TaskOwner => ({ principal: principal.kind === 'anonymous' ? '' : principal.id, session })

/** The stateful sessions of one HTTP endpoint: creation under the global and per-client caps, lookup bound to the principal, idle expiry. */
export function createSessionTable (options: SessionTableOptions) {
  const { server, log, maxSessions, maxSessionsPerClient, sessionIdleMs, events, store, checkMs = 5000, degradations, clock = systemClock } = options
  const sessions = new Map<string, HttpSession>()
  /** Live sessions (and initializes in progress) per principal id. */
  const perClient = new Map<string, number>()
  let reserved = 0

  const countClient = (id: string, delta: number): void => {
    const n = (perClient.get(id) ?? 0) + delta
    if (n <= 0) perClient.delete(id)
    else perClient.set(id, n)
  }

  const retryAfterSeconds = (): string => {
    // The earliest a current session can expire; clients should not hammer a full server.
    let oldest = Infinity
    for (const s of sessions.values()) if (s.session.inflightCount === 0 && s.lastSeen < oldest) oldest = s.lastSeen
    const ms = oldest === Infinity ? sessionIdleMs : oldest + sessionIdleMs - clock.now()
    return String(Math.min(3600, Math.max(1, Math.ceil(ms / 1000))))
  }

  // One warn line (with the cause) when the store starts failing, one info line when an operation works again.
  const storeFailed = (err: unknown): void => degradations.report('session-store', STORE_FAULT, err)
  const storeWorks = (): void => degradations.recover('session-store')
  const storeUnavailable = (): Error => Object.assign(new APP_ERR_SESSION_STORE_UNAVAILABLE(), { headers: { 'retry-after': '2' } })
  /** A store write nobody waits for: it ends in handlers that cannot throw. */
  const detached = (write: Promise<void>): void => { write.then(storeWorks, storeFailed) }

  /**
   * Ends the session here. Only a client's DELETE ends it everywhere: a session that went idle on this
   * replica, or outlived its shutdown, may live on at another (the shared record expires by itself).
   */
  function terminate (entry: HttpSession, reason: 'deleted' | 'idle' | 'shutdown' | 'gone'): void {
    // Callers hold entries from the table (lookup, sweep, closeAll), so each is still in it.
    sessions.delete(entry.id)
    countClient(entry.principal.id, -1)
    entry.session.close()
    if (entry.connection !== undefined) endStream(entry.connection)
    entry.connection = undefined
    if (reason === 'deleted' || store === undefined) {
      events.forget(entry.id)
      if (store !== undefined) detached(store.delete(entry.id))
    }
    log.debug({ session: entry.id.slice(0, 8), reason }, 'session ended')
  }

  /** A local entry for a session initialized elsewhere (from the shared record). */
  function adopt (id: string, record: SessionRecord): HttpSession {
    const entry = { id, lastSeen: clock.now(), standalone: undefined, connection: undefined, principal: record.principal, confirmed: clock.now(), savedLogLevel: record.logLevel } as HttpSession
    entry.session = server.openSession({ stateless: false, log: log.child({ session: id.slice(0, 8) }), owner: sessionOwner(record.principal, id) })
    entry.session.restore(record)
    sessions.set(id, entry)
    countClient(record.principal.id, 1)
    return entry
  }

  /** Finds a session here or in the shared store; undefined when it does not exist (anymore). */
  async function find (id: string): Promise<HttpSession | undefined> {
    let entry = sessions.get(id)
    if (store === undefined) return entry
    if (entry !== undefined && clock.now() - entry.confirmed < checkMs) return entry
    let record: SessionRecord | undefined
    try {
      record = await store.load(id)
    } catch (err) {
      storeFailed(err)
      throw storeUnavailable()
    }
    storeWorks()
    if (record === undefined) {
      // Deleted (or expired) through another replica.
      if (entry !== undefined) terminate(entry, 'gone')
      return undefined
    }
    entry = sessions.get(id)
    if (entry === undefined) entry = adopt(id, record)
    else {
      // What another replica changed (the log level) applies here too.
      entry.session.restore(record)
      entry.savedLogLevel = record.logLevel
    }
    entry.confirmed = clock.now()
    detached(store.touch(id, sessionIdleMs))
    return entry
  }

  return {
    values: () => sessions.values(),
    /** Sessions live here now. */
    count: () => sessions.size,

    /**
     * Opens a session for `request`'s principal and runs its initialize; the session is kept only when
     * initialize succeeded and, with a shared store, its record was saved. Throws 503 at the global cap, 429 at
     * the client's own, and APP_ERR_SESSION_STORE_UNAVAILABLE (503) when the record cannot be saved: such a
     * session is closed at once and holds no slot.
     */
    async open (request: FastifyRequest, initialize: (session: Session) => Promise<string>): Promise<{ entry?: HttpSession, out: string }> {
      if (sessions.size + reserved >= maxSessions) {
        throw Object.assign(new APP_ERR_SESSION_LIMIT(), { headers: { 'retry-after': retryAfterSeconds() } })
      }
      const principal = principalOf(request)
      // One client cannot take the whole cap: the others still get sessions.
      if ((perClient.get(principal.id) ?? 0) >= maxSessionsPerClient) {
        throw Object.assign(new APP_ERR_CLIENT_SESSION_LIMIT(String(maxSessionsPerClient)), { headers: { 'retry-after': retryAfterSeconds() } })
      }
      const entry = { id: randomUUID(), lastSeen: clock.now(), standalone: undefined, connection: undefined, principal, confirmed: clock.now(), savedLogLevel: 0 } as HttpSession
      // Every request brings its own channel (its POST, falling back to the GET stream), so no session-wide one.
      entry.session = server.openSession({ stateless: false, log: log.child({ session: entry.id.slice(0, 8) }), owner: sessionOwner(principal, entry.id) })
      // Counted (reserved, and against its client) until it is kept or let go.
      reserved++
      countClient(principal.id, 1)
      let kept = false
      try {
        const out = await initialize(entry.session)
        if (!entry.session.initialized) return { out }
        // Saved before the id is handed out: the client's next request may land on another replica.
        if (store !== undefined) {
          const state = entry.session.snapshot()
          entry.savedLogLevel = state.logLevel
          try {
            await store.save(entry.id, { ...state, principal }, sessionIdleMs)
          } catch (err) {
            storeFailed(err)
            throw storeUnavailable()
          }
          storeWorks()
        }
        sessions.set(entry.id, entry)
        kept = true
        return { entry, out }
      } finally {
        reserved--
        if (!kept) {
          countClient(principal.id, -1)
          entry.session.close()
        }
      }
    },

    /** Saves what a request changed in the session (its log level) for the other replicas. */
    persist (entry: HttpSession): void {
      if (store === undefined) return
      const state = entry.session.snapshot()
      if (state.logLevel === entry.savedLogLevel) return
      entry.savedLogLevel = state.logLevel
      detached(store.save(entry.id, { ...state, principal: entry.principal }, sessionIdleMs))
    },

    /** The request's session: 400 without an id, 404 for an unknown one or one another principal opened. */
    async lookup (request: FastifyRequest): Promise<HttpSession> {
      const id = request.headers['mcp-session-id']
      if (id === undefined) throw new APP_ERR_SESSION_REQUIRED()
      const entry = await find(id as string)
      // Bound to the principal that opened it (spec security: session hijacking); to anyone else it does
      // not exist. Without auth there is no identity to bind to.
      if (entry === undefined || (entry.principal.kind !== 'anonymous' && entry.principal.id !== principalOf(request).id)) throw new APP_ERR_SESSION_NOT_FOUND()
      return entry
    },

    terminate,

    /** Ends idle sessions (a session holding its GET stream open is present) and pings open GET streams. */
    sweep (): void {
      const now = clock.now()
      for (const entry of sessions.values()) {
        if (now - entry.lastSeen > sessionIdleMs && entry.session.inflightCount === 0 && entry.connection === undefined) terminate(entry, 'idle')
        // Keeps proxies (nginx's 60 s read timeout) from cutting an idle GET stream.
        else if (entry.connection !== undefined) writeComment(entry.connection, 'ping')
      }
    },

    /** Ends every session (shutdown). */
    closeAll (): void {
      for (const entry of [...sessions.values()]) terminate(entry, 'shutdown')
    }
  }
}

/** The session table's type. */
export type SessionTable = ReturnType<typeof createSessionTable>
