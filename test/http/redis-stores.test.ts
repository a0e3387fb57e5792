import t from 'tap'
import pino from 'pino'
import { createRedisStores } from '../../src/http/redis-stores.js'
import { findRedis, startRedis } from '../helpers/redis.js'
import { waitUntil } from '../helpers/wait.js'

// The Redis-backed stores against a real redis-server started for this file.

const skip = findRedis() === undefined ? 'redis-server is not installed (apt-get install redis-server; .ci/run installs it)' : false
const log = pino({ level: 'silent' })
const record = { principal: { id: 'token:ci', kind: 'token' as const }, protocolVersion: '2025-11-25', clientCapabilities: { sampling: {} }, clientInfo: { name: 'c', version: '1' }, logLevel: 2 }
/** A round trip on `stores`' own connection: Redis answers one connection's commands in order, so the appends sent before it are stored. */
const sent = async (stores: { sessions: { load: (id: string) => Promise<unknown> } }): Promise<void> => { await stores.sessions.load('barrier') }

t.test('session records: saved, loaded, pushed back, expired, deleted', { skip }, async (t) => {
  const url = await startRedis(t)
  const { sessions, close } = await createRedisStores({ url, eventTtlMs: 60_000, log })
  t.teardown(close)

  await sessions.save('a', record, 60_000)
  await sessions.save('short', record, 200)
  await sessions.touch('short', 60_000)
  await sessions.save('gone', record, 60_000)
  await sessions.delete('gone')
  await sessions.save('expires', record, 50)
  // Saved after 'short' with the same 200 ms: once Redis's clock has ended it, 'short' would be gone too, untouched.
  await sessions.save('control', record, 200)
  await waitUntil(async () => await sessions.load('control') === undefined, 'the untouched 200 ms record to expire', 30_000, 25)

  t.same(await sessions.load('a'), record)
  t.same(await sessions.load('short'), record, 'touch pushed the expiry back')
  t.equal(await sessions.load('gone'), undefined)
  t.equal(await sessions.load('expires'), undefined)
  t.equal(await sessions.load('never'), undefined)
})

t.test('events: appended in order, followed from an id (stored, then new, across clients), bounded, forgotten', { skip }, async (t) => {
  const url = await startRedis(t)
  const writer = await createRedisStores({ url, eventTtlMs: 60_000, maxEventsPerStream: 10, log })
  const reader = await createRedisStores({ url, eventTtlMs: 60_000, pollMs: 20, log })
  t.teardown(writer.close)
  t.teardown(reader.close)
  for (let i = 0; i < 3; i++) writer.events.append('s', 'p', { id: `p.${i}`, message: i === 0 ? '' : `m${i}` })
  await sent(writer)
  const seen: string[] = []
  const stop = new AbortController()

  const known = await reader.events.follow('s', 'p', 'p.0', (e) => { seen.push(`${e.id}=${e.message}${e.final === true ? '!' : ''}`); return e.final !== true }, stop.signal)
  // A follower of the GET stream kind: it never sees a final event, so it polls until it is stopped.
  const tail: string[] = []
  await reader.events.follow('s', 'p', 'p.2', (e) => { tail.push(e.id); return true }, stop.signal)
  writer.events.append('s', 'p', { id: 'p.3', message: 'answer', final: true })
  writer.events.append('s', 'p', { id: 'p.4', message: 'after the end' })
  await waitUntil(() => seen.length === 3 && tail.length === 2, 'both followers to poll the new events in')
  stop.abort()

  t.equal(known, true)
  t.strictSame(seen, ['p.1=m1', 'p.2=m2', 'p.3=answer!'], 'what was stored, then what another replica appended, up to the final event')
  t.strictSame(tail, ['p.3', 'p.4'], 'a follower with no final event takes everything until stopped')
  t.equal(await reader.events.follow('s', 'p', 'p.99', () => true, stop.signal), false, 'an unknown id')
  t.equal(await reader.events.follow('other', 'p', 'p.0', () => true, stop.signal), false, 'another session has no such stream')

  for (let i = 0; i < 300; i++) writer.events.append('s', 'long', { id: `long.${i}`, message: 'x' })
  writer.events.forget('s')
  // Forgetting is two round trips (the streams, then their deletion): looked at until it is done.
  await waitUntil(async () => await reader.events.follow('s', 'p', 'p.0', () => true, stop.signal) === false, 'the session\'s streams to be forgotten', 30_000, 25)
  t.equal(await reader.events.follow('s', 'p', 'p.0', () => true, stop.signal), false, 'forgotten with its session')
})

t.test('follow stops during the stored part when asked, and a failed append is logged, not thrown', { skip }, async (t) => {
  const url = await startRedis(t)
  const lines: string[] = []
  const warned = pino({ level: 'warn' }, { write: (line: string) => { lines.push(line) } })
  const stores = await createRedisStores({ url, eventTtlMs: 60_000, log: warned })
  for (let i = 0; i < 3; i++) stores.events.append('s', 'p', { id: `p.${i}`, message: `m${i}` })
  await sent(stores)
  const seen: string[] = []

  await stores.events.follow('s', 'p', 'p.0', (e) => { seen.push(e.id); return false }, new AbortController().signal)
  const following = new AbortController()
  await stores.events.follow('s', 'p', 'p.2', () => true, following.signal)
  await stores.close()
  stores.events.append('s', 'p', { id: 'p.3', message: 'after close' })
  await waitUntil(() => lines.some(l => /redis event append failed/.test(l)) && lines.some(l => /redis event follow failed/.test(l)), 'the append and the follower to fail')
  following.abort()

  t.strictSame(seen, ['p.1'])
  t.ok(lines.some(l => /redis event append failed/.test(l)), 'a failed append is logged')
  t.ok(lines.some(l => /redis event follow failed/.test(l)), 'a follower that loses Redis stops and says so')
})
