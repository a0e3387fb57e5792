/** A small LRU of recent results with a time-to-live and a total-weight bound. */
export interface ResultCache<V> {
  /** The live value for `key` (refreshing its recency), or undefined when absent or expired. */
  get(key: string): V | undefined
  /** Stores `value` with its weight (e.g. bytes held); the oldest entries go first when over budget. */
  set(key: string, value: V, weight: number): void
  /** Drops one entry. */
  delete(key: string): void
  /** Drops everything. */
  clear(): void
  /** Entries held now (expired ones may still count until touched). */
  readonly size: number
}

/** Options of createResultCache. */
export interface ResultCacheOptions {
  /** How long an entry lives after it was stored, in ms. */
  ttlMs: number
  /** Most entries kept. */
  maxEntries: number
  /** Most total weight kept (an entry heavier than this is never stored). */
  maxWeight: number
  /** Clock, for tests. */
  now?: () => number
}

interface Entry<V> {
  value: V
  weight: number
  expires: number
}

/** Creates a TTL + LRU cache bounded by entry count and total weight. */
export function createResultCache<V> (options: ResultCacheOptions): ResultCache<V> {
  const { ttlMs, maxEntries, maxWeight, now = Date.now } = options
  // Map iteration order is insertion order, so re-inserting on access makes the first key the least recent.
  const entries = new Map<string, Entry<V>>()
  let weight = 0

  function drop (key: string): void {
    const entry = entries.get(key)
    if (entry === undefined) return
    weight -= entry.weight
    entries.delete(key)
  }

  return {
    get (key) {
      const entry = entries.get(key)
      if (entry === undefined) return undefined
      if (entry.expires <= now()) {
        drop(key)
        return undefined
      }
      entries.delete(key)
      entries.set(key, entry)
      return entry.value
    },
    set (key, value, entryWeight) {
      drop(key)
      if (entryWeight > maxWeight || maxEntries <= 0) return
      const t = now()
      for (const [k, e] of entries) if (e.expires <= t) drop(k)
      while (entries.size >= maxEntries || weight + entryWeight > maxWeight) {
        const oldest = entries.keys().next()
        // Unreachable: with the guards above, the loop runs only while something is stored.
        /* c8 ignore next */
        if (oldest.done === true) break
        drop(oldest.value)
      }
      entries.set(key, { value, weight: entryWeight, expires: t + ttlMs })
      weight += entryWeight
    },
    delete: drop,
    clear () {
      entries.clear()
      weight = 0
    },
    get size () {
      return entries.size
    }
  }
}
