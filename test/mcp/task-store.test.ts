import t, { type Test } from 'tap'
import pino from 'pino'
import { createRedisStores } from '../../src/http/redis-stores.js'
import { MemoryTaskStore, type TaskRecord, type TaskStore } from '../../src/mcp/tasks/task-store.js'
import { findRedis, startRedis } from '../helpers/redis.js'
import { waitUntil } from '../helpers/wait.js'

// The task store's contract, the same for the memory store and the Redis one: records by id and by owner (newest
// first), transitions applied field by field and refused once a task ended, the same winner among concurrent
// transitions, expiry, the runner's heartbeat, and answers left for the runner (taken once).

const record = (taskId: string, owner: string, createdAt: string, ttlMs = 60_000): TaskRecord =>
  ({ taskId, owner, tool: 'slow_compute', status: 'working', createdAt, lastUpdatedAt: createdAt, ttlMs })

const at = (ms: number): string => new Date(ms).toISOString()

async function contract (t: Test, store: TaskStore): Promise<void> {
  const now = Date.now()
  await store.create(record('a', 'alice', at(now - 2000)))
  await store.create(record('b', 'alice', at(now - 1000)))
  await store.create(record('c', 'bob', at(now)))

  t.same(await store.load('a'), record('a', 'alice', at(now - 2000)), 'a record reads back as it was created')
  t.equal(await store.load('nope'), undefined)
  t.same((await store.list('alice')).map(r => r.taskId), ['b', 'a'], 'the owner\'s, newest first')
  t.same(await store.list('carol'), [])

  const questions = { confirm: { method: 'elicitation/create', params: { message: 'Sure?', requestedSchema: { type: 'object', properties: {}, required: [] } } } }
  const asking = await store.transition('a', { status: 'input_required', inputRequests: questions, statusMessage: 'asking', lastUpdatedAt: at(now + 1) })
  t.same(asking, { record: { ...record('a', 'alice', at(now - 2000)), status: 'input_required', inputRequests: questions, statusMessage: 'asking', lastUpdatedAt: at(now + 1) }, changed: true }, 'a transition sets the fields it names, empty arrays kept')
  const working = await store.transition('a', { status: 'working', lastUpdatedAt: at(now + 2) })
  t.notOk('inputRequests' in working!.record, 'the questions go when the task leaves input_required')
  t.equal(working!.record.statusMessage, 'asking', 'a field the change leaves out keeps its value')
  const result = { content: [{ type: 'text' as const, text: 'done' }], structuredContent: { hits: [], total: 0.1 + 0.2 } }
  const completed = await store.transition('a', { status: 'completed', result, lastUpdatedAt: at(now + 3) })
  t.same(completed!.record.result, result, 'a result reads back exactly (empty arrays, every digit)')
  t.same(await store.load('a'), completed!.record)

  const late = await store.transition('a', { status: 'cancelled', statusMessage: 'too late', lastUpdatedAt: at(now + 4) })
  t.same(late, { record: completed!.record, changed: false }, 'an ended task stays as it ended: the change is refused and the record returned')
  t.equal(await store.transition('nope', { status: 'cancelled', lastUpdatedAt: at(now) }), undefined, 'an unknown task')

  // Concurrent transitions of one task: exactly one ends it, and every answer shows that one's record.
  const racers = ['completed', 'failed', 'cancelled', 'completed', 'cancelled'] as const
  const raced = await Promise.all(racers.map((status, i) => store.transition('b', { status, statusMessage: `racer ${i}`, lastUpdatedAt: at(now + 10 + i) })))
  const winners = raced.filter(r => r?.changed === true)
  t.equal(winners.length, 1, 'one winner')
  for (const r of raced) t.same(r!.record, winners[0]!.record, 'the losers are shown the winner\'s record')
  t.same(await store.load('b'), winners[0]!.record)

  t.equal(await store.lastBeat('b'), undefined, 'no beat yet')
  await store.beat('b', 60_000)
  t.ok(Math.abs((await store.lastBeat('b') ?? 0) - Date.now()) < 5000)

  await store.leaveAnswers('b', { one: { action: 'accept' } }, 60_000)
  await store.leaveAnswers('b', { two: { action: 'decline' } }, 60_000)
  t.same(await store.takeAnswers('b'), { one: { action: 'accept' }, two: { action: 'decline' } })
  t.same(await store.takeAnswers('b'), {}, 'taken once')

  await store.create(record('short', 'dave', new Date().toISOString(), 100))
  // Its 100 ms ttl runs on the store's clock (Redis's own, for that store): its end is waited for by its effect.
  await waitUntil(async () => await store.load('short') === undefined, 'the short record to expire', 30_000, 25)
  t.equal(await store.load('short'), undefined, 'expired with its ttl')
  t.equal(await store.transition('short', { status: 'cancelled', lastUpdatedAt: at(Date.now()) }), undefined, 'an expired task is unknown to a transition too')
}

t.test('the memory store', async (t) => {
  await contract(t, new MemoryTaskStore())
})

t.test('the Redis store', { skip: findRedis() === undefined ? 'redis-server is not installed (apt-get install redis-server; .ci/run installs it)' : false }, async (t) => {
  const stores = await createRedisStores({ url: await startRedis(t), eventTtlMs: 60_000, log: pino({ level: 'silent' }) })
  t.teardown(() => stores.close())
  await contract(t, stores.tasks)
})

t.test('the Redis store: transitions on two clients (two replicas) have one winner', { skip: findRedis() === undefined ? 'redis-server is not installed' : false }, async (t) => {
  const url = await startRedis(t)
  const [one, two] = [await createRedisStores({ url, eventTtlMs: 60_000, log: pino({ level: 'silent' }) }), await createRedisStores({ url, eventTtlMs: 60_000, log: pino({ level: 'silent' }) })]
  t.teardown(async () => { await one.close(); await two.close() })
  const now = Date.now()
  for (let i = 0; i < 50; i++) {
    await one.tasks.create(record(`r${i}`, 'alice', at(now)))
    const [cancel, complete] = await Promise.all([
      two.tasks.transition(`r${i}`, { status: 'cancelled', statusMessage: 'cancelled by the client', lastUpdatedAt: at(now + 1) }),
      one.tasks.transition(`r${i}`, { status: 'completed', result: { content: [] }, lastUpdatedAt: at(now + 2) })
    ])
    t.equal(Number(cancel!.changed) + Number(complete!.changed), 1, `race ${i}: one winner`)
    t.same(cancel!.record, complete!.record, `race ${i}: both see the same end`)
  }
})
