import t, { type Test } from 'tap'
import pino from 'pino'
import { createRedisStores } from '../../plugins/redis-stores.js'
import { MemoryTaskStore, type TaskRecord, type TaskStore } from '../../src/mcp/tasks.js'
import { findRedis, startRedis } from '../helpers/redis.js'

// The task store's contract, the same for the memory store and the Redis one: records by id and by owner (newest
// first), expiry, the runner's heartbeat, and answers left for the runner (taken once).

const record = (taskId: string, owner: string, createdAt: string, ttlMs = 60_000): TaskRecord =>
  ({ taskId, owner, tool: 'slow_compute', status: 'working', createdAt, lastUpdatedAt: createdAt, ttlMs })

async function contract (t: Test, store: TaskStore): Promise<void> {
  const now = Date.now()
  await store.save(record('a', 'alice', new Date(now - 2000).toISOString()))
  await store.save(record('b', 'alice', new Date(now - 1000).toISOString()))
  await store.save(record('c', 'bob', new Date(now).toISOString()))
  await store.save({ ...record('a', 'alice', new Date(now - 2000).toISOString()), status: 'completed' })

  t.match(await store.load('a'), { taskId: 'a', status: 'completed' }, 'the last save wins')
  t.equal(await store.load('nope'), undefined)
  t.same((await store.list('alice')).map(r => r.taskId), ['b', 'a'], 'the owner\'s, newest first')
  t.same(await store.list('carol'), [])

  t.equal(await store.lastBeat('b'), undefined, 'no beat yet')
  await store.beat('b', 60_000)
  t.ok(Math.abs((await store.lastBeat('b') ?? 0) - Date.now()) < 5000)

  await store.leaveAnswers('b', { one: { action: 'accept' } }, 60_000)
  await store.leaveAnswers('b', { two: { action: 'decline' } }, 60_000)
  t.same(await store.takeAnswers('b'), { one: { action: 'accept' }, two: { action: 'decline' } })
  t.same(await store.takeAnswers('b'), {}, 'taken once')

  await store.save(record('short', 'dave', new Date().toISOString(), 100))
  await new Promise(resolve => setTimeout(resolve, 250))
  t.equal(await store.load('short'), undefined, 'expired with its ttl')
}

t.test('the memory store', async (t) => {
  await contract(t, new MemoryTaskStore())
})

t.test('the Redis store', { skip: findRedis() === undefined ? 'redis-server is not installed (apt-get install redis-server; .ci/run installs it)' : false }, async (t) => {
  const stores = await createRedisStores({ url: await startRedis(t), eventTtlMs: 60_000, log: pino({ level: 'silent' }) })
  t.teardown(() => stores.close())
  await contract(t, stores.tasks)
})
