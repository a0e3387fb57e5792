import type { Redis } from 'ioredis'
import type { Logger } from '../base/logger.js'
import type { EventStore, StoredEvent } from './event-store.js'
import type { SessionRecord, SessionStore } from './session-store.js'
import type { TaskStore } from '../mcp/tasks/task-store.js'
import { redisTaskStore } from './redis-task-store.js'

/** Options of the Redis-backed stores. */
export interface RedisStoresOptions {
  /** `redis://[user:password@]host:port[/db]`. */
  url: string
  /** Key prefix, so several deployments can share one Redis. Default `wmcp:`. */
  prefix?: string
  /** How long a session's events outlive its last event, ms (its idle time). */
  eventTtlMs: number
  /** Events kept per stream (XADD MAXLEN ~). Default 1000. */
  maxEventsPerStream?: number
  /** How often a follower that caught up looks for new events, ms. Default 100. */
  pollMs?: number
  log: Logger
}

/** Session records, SSE events and task records in Redis, shared by every replica. */
export interface RedisStores {
  sessions: SessionStore
  events: EventStore
  tasks: TaskStore
  close(): Promise<void>
}

type Entry = [id: string, fields: string[]]

const fieldsOf = (event: StoredEvent): string[] => event.final === true ? ['id', event.id, 'msg', event.message, 'final', '1'] : ['id', event.id, 'msg', event.message]

function eventOf ([, fields]: Entry): StoredEvent {
  const map: Record<string, string> = {}
  for (let i = 0; i + 1 < fields.length; i += 2) map[fields[i]] = fields[i + 1]
  return map.final === '1' ? { id: map.id, message: map.msg, final: true } : { id: map.id, message: map.msg }
}

/**
 * Connects to Redis and returns both stores. Events of a stream live in a Redis Stream
 * `<prefix>ev:<session>:<stream>` (trimmed to the last maxEventsPerStream, expiring with the session),
 * listed in `<prefix>evs:<session>` so a session's events can be dropped together. Records are JSON
 * strings `<prefix>session:<id>` with a TTL. Writes of events are pipelined and not awaited.
 */
export async function createRedisStores (options: RedisStoresOptions): Promise<RedisStores> {
  const { url, prefix = 'wmcp:', eventTtlMs, maxEventsPerStream = 1000, pollMs = 100, log } = options
  // ioredis is CommonJS: Node's loader exposes its named export, the bundle's interop only `default`
  // (the bundle's coverage is not measured, so that side is never seen taken).
  const ioredis = await import('ioredis') as unknown as { Redis?: typeof Redis, default: { Redis: typeof Redis } }
  /* c8 ignore next */
  const RedisClient = ioredis.Redis ?? ioredis.default.Redis
  const redis: Redis = new RedisClient(url, { lazyConnect: true, maxRetriesPerRequest: 2, enableOfflineQueue: true })
  // While Redis is down the client fails every reconnect (up to one every 2 s): one warn line with the cause per
  // outage, the rest at debug, and one info line once it is back.
  let down = false
  redis.on('error', (err: Error) => {
    if (down) return log.debug({ err }, 'redis error')
    down = true
    log.warn({ err }, 'redis error')
  })
  redis.on('ready', () => {
    if (!down) return
    down = false
    log.info('redis connection restored')
  })
  await redis.connect()

  const sessionKey = (id: string): string => `${prefix}session:${id}`
  const streamKey = (session: string, stream: string): string => `${prefix}ev:${session}:${stream}`
  const streamsKey = (session: string): string => `${prefix}evs:${session}`
  const failed = (what: string) => (err: Error): void => log.warn({ err: err.message }, `redis ${what} failed`)

  const sessions: SessionStore = {
    async save (id, record, ttlMs) {
      await redis.set(sessionKey(id), JSON.stringify(record), 'PX', ttlMs)
    },
    async load (id) {
      const text = await redis.get(sessionKey(id))
      return text === null ? undefined : JSON.parse(text) as SessionRecord
    },
    async touch (id, ttlMs) {
      await redis.pexpire(sessionKey(id), ttlMs)
    },
    async delete (id) {
      await redis.del(sessionKey(id))
    }
  }

  const events: EventStore = {
    append (session, stream, event) {
      const key = streamKey(session, stream)
      redis.multi()
        .xadd(key, 'MAXLEN', '~', String(maxEventsPerStream), '*', ...fieldsOf(event))
        .pexpire(key, eventTtlMs)
        .sadd(streamsKey(session), key)
        .pexpire(streamsKey(session), eventTtlMs)
        .exec()
        .catch(failed('event append'))
    },

    async follow (session, stream, afterId, onEvent, signal) {
      const key = streamKey(session, stream)
      const stored = await redis.xrange(key, '-', '+') as Entry[]
      const at = stored.findIndex(entry => eventOf(entry).id === afterId)
      if (at === -1) return false
      let last = stored[at][0]
      for (const entry of stored.slice(at + 1)) {
        last = entry[0]
        if (!onEvent(eventOf(entry))) return true
      }
      // Caught up: poll for what other replicas (or this one) append next, until told to stop.
      const poll = async (): Promise<void> => {
        for (;;) {
          await new Promise(resolve => setTimeout(resolve, pollMs))
          if (signal.aborted) return
          const fresh = await redis.xrange(key, `(${last}`, '+') as Entry[]
          for (const entry of fresh) {
            last = entry[0]
            if (!onEvent(eventOf(entry))) return
          }
        }
      }
      poll().catch(failed('event follow'))
      return true
    },

    forget (session) {
      redis.smembers(streamsKey(session))
        .then(keys => redis.del(streamsKey(session), ...keys))
        .catch(failed('event cleanup'))
    },

    async close () {}
  }

  return {
    sessions,
    events,
    tasks: redisTaskStore(redis, prefix),
    async close () {
      await redis.quit().catch(() => redis.disconnect())
    }
  }
}
