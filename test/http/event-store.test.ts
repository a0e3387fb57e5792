import t from 'tap'
import { createMemoryEventStore, type StoredEvent } from '../../src/http/event-store.js'

// The in-memory event store: follow = replay after an id, then live appends; bounded per stream and session.

const ev = (stream: string, seq: number, message = `m${seq}`): StoredEvent => ({ id: `${stream}.${seq}`, message })

t.test('follow replays what came after the id, then hands over new events as they are appended', async (t) => {
  const store = createMemoryEventStore()
  for (let i = 0; i < 3; i++) store.append('s1', 'a', ev('a', i))
  const seen: string[] = []
  const stop = new AbortController()

  const known = await store.follow('s1', 'a', 'a.0', (e) => { seen.push(e.id); return true }, stop.signal)
  store.append('s1', 'a', ev('a', 3))
  store.append('s1', 'b', ev('b', 0))
  stop.abort()
  store.append('s1', 'a', ev('a', 4))

  t.equal(known, true)
  t.strictSame(seen, ['a.1', 'a.2', 'a.3'], 'stored ones, then live ones of that stream only, until aborted')
})

t.test('follow stops when onEvent says so, during replay or live', async (t) => {
  const store = createMemoryEventStore()
  for (let i = 0; i < 3; i++) store.append('s', 'a', ev('a', i))
  const inReplay: string[] = []
  const live: string[] = []

  await store.follow('s', 'a', 'a.0', (e) => { inReplay.push(e.id); return false }, new AbortController().signal)
  await store.follow('s', 'a', 'a.2', (e) => { live.push(e.id); return e.id !== 'a.3' }, new AbortController().signal)
  store.append('s', 'a', ev('a', 3))
  store.append('s', 'a', ev('a', 4))

  t.strictSame(inReplay, ['a.1'])
  t.strictSame(live, ['a.3'])
})

t.test('an unknown id, stream or session is not followed; an aborted follow replays and returns', async (t) => {
  const store = createMemoryEventStore()
  store.append('s', 'a', ev('a', 0))
  const aborted = new AbortController()
  aborted.abort()
  const seen: string[] = []

  t.equal(await store.follow('s', 'a', 'a.9', () => true, aborted.signal), false)
  t.equal(await store.follow('s', 'zz', 'a.0', () => true, aborted.signal), false)
  t.equal(await store.follow('other', 'a', 'a.0', () => true, aborted.signal), false, 'another session never sees this one\'s events')
  store.append('s', 'a', ev('a', 1))
  t.equal(await store.follow('s', 'a', 'a.0', (e) => { seen.push(e.id); return true }, aborted.signal), true)
  t.strictSame(seen, ['a.1'])
})

t.test('bounded: old events and old streams are dropped; a forgotten session has nothing', async (t) => {
  const store = createMemoryEventStore({ maxEventsPerStream: 2, maxStreamsPerSession: 2 })
  for (let i = 0; i < 4; i++) store.append('s', 'a', ev('a', i))
  store.append('s', 'b', ev('b', 0))
  store.append('s', 'c', ev('c', 0))
  store.append('gone', 'x', ev('x', 0))
  store.append('gone', 'x', ev('x', 1))
  store.forget('gone')
  const never = new AbortController().signal

  t.equal(await store.follow('s', 'a', 'a.1', () => true, never), false, 'a.1 was pushed out by a.2 and a.3')
  t.equal(await store.follow('s', 'b', 'b.0', () => true, never), true)
  t.equal(await store.follow('s', 'a', 'a.2', () => true, never), false, 'stream a was the oldest when c came')
  t.equal(await store.follow('gone', 'x', 'x.0', () => true, never), false)
  await store.close()
  t.equal(await store.follow('s', 'b', 'b.0', () => true, never), false, 'closed: empty')
})
