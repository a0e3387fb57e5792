import { toolError } from '../base/errors.js'

/** Kinds of expensive work, each with its own slots: ripgrep children, full walks, large file reads. */
export type WorkKind = 'search' | 'walk' | 'read'

/** Slots and queue bound of one kind of work. */
export interface PoolLimits {
  /** At most this many run at once. */
  concurrency: number
  /** At most this many wait for a slot; one more is refused with BUSY. */
  queue: number
}

/** What the limiter is doing now, per kind (get_workspace_info, metrics, tests). */
export type LimiterStats = Record<WorkKind, { running: number, queued: number, refused: number }>

/** A process-wide limiter for expensive work, shared by every session of both transports. */
export interface Limiter {
  /**
   * Runs `work` in a slot of `kind`; waits in a bounded queue (leaving it if `signal` aborts); BUSY when full.
   * `work` is told how many slots of its kind are in use as it starts, itself included.
   */
  run<T>(kind: WorkKind, signal: AbortSignal | undefined, work: (running: number) => Promise<T>): Promise<T>
  /** Throws BUSY now when a call of `kind` would be refused: lets a caller skip its set-up work. */
  admit(kind: WorkKind): void
  stats(): LimiterStats
}

/** Defaults sized for 2 cores: ripgrep already uses every core per child, so few run at once. */
export const DEFAULT_LIMITS: Record<WorkKind, PoolLimits> = {
  search: { concurrency: 2, queue: 32 },
  walk: { concurrency: 4, queue: 64 },
  read: { concurrency: 4, queue: 64 }
}

const NOUN: Record<WorkKind, string> = { search: 'searches', walk: 'directory walks', read: 'large reads' }

interface Waiter {
  start: () => void
  signal?: AbortSignal
  onAbort?: () => void
}

/** Creates the limiter; `limits` overrides the defaults per kind. */
export function createLimiter (limits: Partial<Record<WorkKind, Partial<PoolLimits>>> = {}): Limiter {
  const kinds = Object.keys(DEFAULT_LIMITS) as WorkKind[]
  const resolved = Object.fromEntries(kinds.map(k => [k, { ...DEFAULT_LIMITS[k], ...limits[k] }])) as Record<WorkKind, PoolLimits>
  const state = Object.fromEntries(kinds.map(k => [k, { running: 0, refused: 0, waiting: [] as Waiter[] }])) as
    Record<WorkKind, { running: number, refused: number, waiting: Waiter[] }>

  function release (kind: WorkKind): void {
    const pool = state[kind]
    const next = pool.waiting.shift()
    if (next === undefined) {
      pool.running--
      return
    }
    // The slot passes straight to the next waiter: running stays the same.
    if (next.onAbort !== undefined) next.signal?.removeEventListener('abort', next.onAbort)
    next.start()
  }

  /** Refuses with BUSY when every slot of `kind` is taken and its queue is full. */
  function admit (kind: WorkKind): void {
    const pool = state[kind]
    const limit = resolved[kind]
    if (pool.running < limit.concurrency || pool.waiting.length < limit.queue) return
    pool.refused++
    throw toolError('BUSY', `the server is at its limit of ${limit.concurrency} concurrent ${NOUN[kind]} with ${pool.waiting.length} more waiting`,
      'retry in a few seconds, or narrow the request (a smaller path, fewer files)')
  }

  return {
    async run (kind, signal, work) {
      const pool = state[kind]
      if (pool.running >= resolved[kind].concurrency) {
        admit(kind)
        await new Promise<void>((resolve, reject) => {
          const waiter: Waiter = { start: resolve, signal }
          if (signal !== undefined) {
            waiter.onAbort = () => {
              const at = pool.waiting.indexOf(waiter)
              if (at !== -1) pool.waiting.splice(at, 1)
              reject(signal.reason)
            }
            signal.addEventListener('abort', waiter.onAbort, { once: true })
          }
          pool.waiting.push(waiter)
        })
      } else {
        pool.running++
      }
      try {
        return await work(pool.running)
      } finally {
        release(kind)
      }
    },
    admit,
    stats () {
      return Object.fromEntries(kinds.map(k => [k, { running: state[k].running, queued: state[k].waiting.length, refused: state[k].refused }])) as LimiterStats
    }
  }
}
