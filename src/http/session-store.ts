import type { SessionState } from '../mcp/legacy/session.js'
import type { Principal } from './auth.js'

/** A session as any replica can take it over: who opened it and what initialize negotiated. */
export interface SessionRecord extends SessionState {
  principal: Principal
}

/**
 * Sessions shared between replicas (stateful mode behind a load balancer without sticky routing): the
 * replica that answers initialize saves the record, any other rebuilds the session from it. Records
 * expire after the session's idle time unless touched.
 */
export interface SessionStore {
  save(id: string, record: SessionRecord, ttlMs: number): Promise<void>
  /** The record, or undefined when it never existed, expired or was deleted. */
  load(id: string): Promise<SessionRecord | undefined>
  /** Pushes the expiry back (the session is in use). */
  touch(id: string, ttlMs: number): Promise<void>
  delete(id: string): Promise<void>
}
