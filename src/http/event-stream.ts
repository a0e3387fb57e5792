import { randomBytes } from 'node:crypto'
import type { ServerResponse } from 'node:http'
import type { EventStore } from './event-store.js'
import { endStream, openEventStream, writeEvent, writePriming } from './sse.js'

/** A fresh stream id: unguessable, and free of the '.' that separates it from the sequence in an event id. */
export const newStreamId = (): string => randomBytes(9).toString('base64url')

/** The stream an event id belongs to (`<stream>.<seq>`), or undefined for an id this server did not issue. */
export function streamOfEventId (eventId: string): string | undefined {
  const dot = eventId.lastIndexOf('.')
  if (dot <= 0 || !/^\d+$/.test(eventId.slice(dot + 1))) return undefined
  return eventId.slice(0, dot)
}

/**
 * One SSE stream of a session (a POST's answer, or the GET stream): every event gets an id
 * `<stream>.<seq>` and is appended to the event store, so that a client that loses the connection can
 * pick the stream up again with GET + Last-Event-ID, on any replica that shares the store.
 */
export class EventStream {
  private seq = 0
  private sink: ServerResponse | undefined

  constructor (private readonly session: string, readonly id: string, private readonly store: EventStore | undefined) {}

  /** Starts SSE on `raw` and sends the priming event first. */
  open (raw: ServerResponse, longLived: boolean): void {
    openEventStream(raw, longLived)
    this.sink = raw
    const id = this.nextId()
    this.store?.append(this.session, this.id, { id, message: '' })
    writePriming(raw, id)
  }

  /** Sends one message: kept in the store, and written to the connection while there is one. `final` marks a POST's response. */
  send (message: string, final = false): void {
    const id = this.nextId()
    this.store?.append(this.session, this.id, final ? { id, message, final } : { id, message })
    if (this.sink !== undefined) writeEvent(this.sink, message, id)
  }

  /** Serves the stream on `raw` from now on (a resumed connection whose SSE headers are sent). */
  attach (raw: ServerResponse): void {
    this.sink = raw
  }

  /** Ends the connection but not the stream: what comes next waits in the store for the client to resume (SEP-1699). */
  detach (): void {
    if (this.sink !== undefined) endStream(this.sink)
    this.sink = undefined
  }

  /** True once the stream holds its events for resumption (a store is configured). */
  get resumable (): boolean {
    return this.store !== undefined
  }

  private nextId (): string {
    return `${this.id}.${this.seq++}`
  }
}
