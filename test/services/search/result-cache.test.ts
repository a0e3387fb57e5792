// The search result cache: least recently used goes first, by count and by weight; expired entries are
// dropped on the way; an entry heavier than the whole budget is never stored.
import t from 'tap'
import { createResultCache } from '../../../src/services/search/result-cache.js'

t.test('bounded by entries: the least recently used goes first, and a read refreshes', async (t) => {
  const cache = createResultCache<string>({ ttlMs: 60_000, maxEntries: 2, maxWeight: 100 })
  cache.set('a', 'A', 1)
  cache.set('b', 'B', 1)
  t.equal(cache.get('a'), 'A', 'a is now the most recent')
  cache.set('c', 'C', 1)

  t.strictSame([cache.get('a'), cache.get('b'), cache.get('c'), cache.size], ['A', undefined, 'C', 2])
  cache.delete('a')
  t.equal(cache.size, 1)
  cache.clear()
  t.equal(cache.size, 0)
})

t.test('bounded by weight: old entries make room, and one heavier than the budget is not stored', async (t) => {
  const cache = createResultCache<string>({ ttlMs: 60_000, maxEntries: 10, maxWeight: 10 })
  cache.set('a', 'A', 4)
  cache.set('b', 'B', 4)
  cache.set('c', 'C', 4)
  t.strictSame([cache.get('a'), cache.get('b'), cache.get('c')], [undefined, 'B', 'C'])

  cache.set('huge', 'H', 11)
  t.equal(cache.get('huge'), undefined)
  t.equal(cache.size, 2, 'nothing was evicted for it')
  cache.set('b', 'B2', 4)
  t.equal(cache.get('b'), 'B2', 'setting a key again replaces it and its weight')
})

t.test('entries expire after the TTL and are swept when something new is stored', async (t) => {
  let clock = 0
  const cache = createResultCache<string>({ ttlMs: 100, maxEntries: 10, maxWeight: 100, now: () => clock })
  cache.set('a', 'A', 1)
  cache.set('b', 'B', 1)
  clock = 150
  t.equal(cache.get('a'), undefined, 'expired on read')
  cache.set('c', 'C', 1)
  t.equal(cache.size, 1, 'the other expired entry went when c was stored')
})

t.test('a cache of zero entries stores nothing', async (t) => {
  const cache = createResultCache<string>({ ttlMs: 60_000, maxEntries: 0, maxWeight: 100 })
  cache.set('a', 'A', 1)
  t.strictSame([cache.get('a'), cache.size], [undefined, 0])
})
