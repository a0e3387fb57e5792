import { EventEmitter } from 'node:events'

/** One stored SSE event: its id and the JSON-RPC message it carried ('' for a priming event). */
export interface StoredEvent {
  id: string
  message: string
  /** The response that ends a POST's stream. */
  final?: boolean
}

/**
 * Where SSE events are kept so a client can resume a broken stream (spec 2025-11-25 basic/transports,
 * Resumability and Redelivery): every event of a session's streams is appended, and a GET with
 * Last-Event-ID follows that stream from that id — what was stored, then what comes — and never
 * another stream's events.
 */
export interface EventStore {
  /** Appends an event of `stream`; ids are assigned by the caller, in order. Never throws (a failed write is logged by the store). */
  append(session: string, stream: string, event: StoredEvent): void
  /**
   * Hands `onEvent` every event of `stream` after `afterId`: the stored ones, then new ones as they are
   * appended, until `signal` aborts or `onEvent` returns false. Resolves once the stored ones were handed
   * over (the rest follow): true, or false — with nothing handed over — when the store does not know
   * `afterId` on that stream (expired, or never there).
   */
  follow(session: string, stream: string, afterId: string, onEvent: (event: StoredEvent) => boolean, signal: AbortSignal): Promise<boolean>
  /** Drops a session's events (it ended). */
  forget(session: string): void
  close(): Promise<void>
}

/** Options of the in-memory store. */
export interface MemoryEventStoreOptions {
  /** Events kept per stream; older ones are dropped (a client that far behind cannot resume). Default 1000. */
  maxEventsPerStream?: number
  /** Streams kept per session; the oldest is dropped first. Default 64. */
  maxStreamsPerSession?: number
}

/** The embedded default: a single process's events, bounded per stream and per session. */
export function createMemoryEventStore (options: MemoryEventStoreOptions = {}): EventStore {
  const { maxEventsPerStream = 1000, maxStreamsPerSession = 64 } = options
  const sessions = new Map<string, Map<string, StoredEvent[]>>()
  const appended = new EventEmitter()
  appended.setMaxListeners(0)
  const key = (session: string, stream: string): string => `${session}\n${stream}`

  return {
    append (session, stream, event) {
      let streams = sessions.get(session)
      if (streams === undefined) {
        streams = new Map()
        sessions.set(session, streams)
      }
      let events = streams.get(stream)
      if (events === undefined) {
        // Map order is insertion order: the first key is the oldest stream.
        if (streams.size >= maxStreamsPerSession) streams.delete(streams.keys().next().value as string)
        events = []
        streams.set(stream, events)
      }
      events.push(event)
      if (events.length > maxEventsPerStream) events.shift()
      appended.emit(key(session, stream), event)
    },

    async follow (session, stream, afterId, onEvent, signal) {
      const events = sessions.get(session)?.get(stream)
      const at = events?.findIndex(e => e.id === afterId) ?? -1
      if (events === undefined || at === -1) return false
      // Synchronous from the stored events to the listener: nothing appended in between is missed.
      for (const event of events.slice(at + 1)) if (!onEvent(event)) return true
      if (signal.aborted) return true
      const name = key(session, stream)
      const stop = (): void => {
        appended.off(name, listener)
        signal.removeEventListener('abort', stop)
      }
      const listener = (event: StoredEvent): void => { if (!onEvent(event)) stop() }
      appended.on(name, listener)
      signal.addEventListener('abort', stop, { once: true })
      return true
    },

    forget (session) {
      sessions.delete(session)
    },

    async close () {
      sessions.clear()
      appended.removeAllListeners()
    }
  }
}
