import t, { type Test } from 'tap'
import pino from 'pino'
import { createRedisStores } from '../../src/http/redis-stores.js'
import type { RequestChannel } from '../../src/mcp/wire/channel.js'
import type { Envelope } from '../../src/mcp/era.js'
import { TASKS_EXTENSION } from '../../src/mcp/tasks/tasks.js'
import type { TaskOwner, TaskStore } from '../../src/mcp/tasks/task-store.js'
import { taskTools } from '../fixtures/conformance/conformance-tasks.js'
import { initializedSession, testEngine, testTools } from '../helpers/engine.js'
import { findRedis, startRedis } from '../helpers/redis.js'
import { waitUntil } from '../helpers/wait.js'

// Tasks across replicas through a real redis-server: two engines in this process, each with its own Redis client,
// as two replicas behind a load balancer would be. A task one runs is polled, answered and cancelled on the other;
// a task whose replica stops saying it is alive is reported failed, never left working forever.

type Message = Record<string, any>
const skip = findRedis() === undefined ? 'redis-server is not installed (apt-get install redis-server; .ci/run installs it)' : false
const HEARTBEAT_MS = 100
/** The principal every 2026 request here acts for (a token's: no session in that era). */
const ALICE: TaskOwner = { principal: 'token:alice' }
const envelope: Envelope = { protocolVersion: '2026-07-28', clientCapabilities: { extensions: { [TASKS_EXTENSION]: {} } }, clientInfo: undefined, logLevel: undefined }

async function replica (t: Test, url: string, wrap: (store: TaskStore) => TaskStore = store => store, ttlMs = 3_600_000) {
  const stores = await createRedisStores({ url, eventTtlMs: 60_000, log: pino({ level: 'silent' }) })
  t.teardown(() => stores.close())
  const engine = testEngine({ tools: [...testTools, ...taskTools()] }, { taskStore: wrap(stores.tasks), tasks: { heartbeatMs: HEARTBEAT_MS, ttlMs } })
  t.teardown(() => engine.server.stopCalls(0))
  const ask = async (method: string, params: Message): Promise<Message> => {
    const channel: RequestChannel = { send: () => {} }
    const { answer } = engine.server.answerModern({ id: 1, method, params }, envelope, { channel, owner: ALICE })
    return JSON.parse((await answer).message!) as Message
  }
  /** Polls tasks/get here until the task reaches `until` or ends. */
  const poll = async (taskId: string, until?: string): Promise<Message> => {
    let task: Message = {}
    await waitUntil(async () => {
      task = (await ask('tasks/get', { taskId })).result
      return task.status === until || ['completed', 'failed', 'cancelled'].includes(task.status)
    }, `task ${taskId} to settle`, 30_000, 25)
    return task
  }
  return { engine, ask, poll }
}

t.test('a task one replica runs is polled to its result, answered and cancelled through another', { skip }, async (t) => {
  const url = await startRedis(t)
  const [a, b] = [await replica(t, url), await replica(t, url)]

  const computed = (await a.ask('tools/call', { name: 'slow_compute', arguments: { seconds: 0.3, label: 'shared' } })).result
  t.match(await b.poll(computed.taskId), { status: 'completed', result: { content: [{ text: 'computed shared after 0.3 s' }] } }, 'polled to its result on the other replica')

  const asking = (await a.ask('tools/call', { name: 'confirm_delete', arguments: { filename: 'x.txt' } })).result
  const question = await b.poll(asking.taskId, 'input_required')
  t.match(question.inputRequests, { confirm_delete: { method: 'elicitation/create' } }, 'the question, read on the other replica')
  t.match(await b.ask('tasks/update', { taskId: asking.taskId, inputResponses: { confirm_delete: { action: 'accept', content: { confirm: true } } } }), { result: { resultType: 'complete' } })
  t.match(await b.poll(asking.taskId), { status: 'completed', result: { content: [{ text: 'confirmed (nothing was deleted: a fixture)' }] } }, 'the answer reached the replica running it')

  const long = (await a.ask('tools/call', { name: 'slow_compute', arguments: { seconds: 60 } })).result
  t.match(await b.ask('tasks/cancel', { taskId: long.taskId }), { result: { resultType: 'complete' } })
  await waitUntil(() => a.engine.server.activeCalls().length === 0, 'the running replica to stop the work')
  t.same(a.engine.server.activeCalls(), [], 'the running replica stopped the work at its next heartbeat')
  t.match(await a.poll(long.taskId), { status: 'cancelled', statusMessage: 'cancelled by the client' })
})

t.test('2025-11-25 on another replica: the same session lists the task and waits for its result there; another session sees nothing', { skip }, async (t) => {
  const url = await startRedis(t)
  const [a, b] = [await replica(t, url), await replica(t, url)]
  // One HTTP session served by both replicas (each adopts it from the shared store): one owner on both.
  const owner: TaskOwner = { principal: 'token:alice', session: 'session-1' }
  const { call } = await initializedSession(a.engine, {}, owner)
  const same = await initializedSession(b.engine, {}, owner)
  const other = await initializedSession(b.engine, {}, { principal: 'token:alice', session: 'session-2' })
  t.same((await same.call('tasks/list', {})).result.tasks, [], 'none yet')
  const { task } = (await call('tools/call', { name: 'slow_compute', arguments: { seconds: 0.4 }, task: {} })).result

  t.match((await same.call('tasks/list', {})).result.tasks, [{ taskId: task.taskId, status: 'working' }])
  t.same((await other.call('tasks/list', {})).result.tasks, [], 'another session of the same token lists none')
  t.match(await other.call('tasks/result', { taskId: task.taskId }), { error: { code: -32602, message: /no task "[^"]+": it never existed/ } })
  t.match((await same.call('tasks/result', { taskId: task.taskId })).result, { content: [{ text: 'computed result after 0.4 s' }], _meta: { 'io.modelcontextprotocol/related-task': { taskId: task.taskId } } })
})

t.test('2025-11-25: a session\'s task cancelled through another replica stops at the next beat, and the session is told', { skip }, async (t) => {
  const url = await startRedis(t)
  const [a, b] = [await replica(t, url), await replica(t, url)]
  const owner: TaskOwner = { principal: '', session: 'session-2' }
  const { call, sent } = await initializedSession(a.engine, {}, owner)
  const elsewhere = await initializedSession(b.engine, {}, owner)
  const { task } = (await call('tools/call', { name: 'slow_compute', arguments: { seconds: 60 }, task: {} })).result

  t.match((await elsewhere.call('tasks/cancel', { taskId: task.taskId })).result, { taskId: task.taskId, status: 'cancelled' })
  await waitUntil(() => a.engine.server.activeCalls().length === 0, 'the running replica to stop the work')

  t.same(a.engine.server.activeCalls(), [], 'the running replica stopped the work')
  t.match(sent.filter(m => m.method === 'notifications/tasks/status').map(m => m.params), [{ taskId: task.taskId, status: 'cancelled', statusMessage: 'cancelled by the client' }], 'its session hears of the cancel made elsewhere, once')
})

t.test('a task whose replica stops saying it is alive is reported failed, with the reason and what to do', { skip }, async (t) => {
  const url = await startRedis(t)
  let alive = true
  // The first replica's heartbeats stop as a killed process's would; its work goes on unseen.
  const a = await replica(t, url, store => ({ ...store, beat: async (id, ttl) => { if (alive) await store.beat(id, ttl) } }))
  const b = await replica(t, url)
  const { taskId } = (await a.ask('tools/call', { name: 'slow_compute', arguments: { seconds: 60 } })).result
  t.equal((await b.ask('tasks/get', { taskId })).result.status, 'working', 'working while its replica beats')

  alive = false
  const lost = await b.poll(taskId)

  t.match(lost, { status: 'failed', statusMessage: 'lost: its server stopped', error: { code: -32603, message: /^the server running this task stopped before it finished \(last seen \d{4}-\d\d-\d\dT[\d:.]+Z\); call slow_compute again$/ } })
  await waitUntil(() => a.engine.server.activeCalls().length === 0, 'the replica still running it to see the record failed')
  t.same(a.engine.server.activeCalls(), [], 'the replica that still ran it stops it once it sees the record failed')
})

t.test('a task that never beat is lost as well; tasks/list skips a record that expired before its owner\'s list', { skip }, async (t) => {
  const url = await startRedis(t)
  const silent = await replica(t, url, store => ({ ...store, beat: async () => {} }))
  const brief = await replica(t, url, undefined, 300)
  const b = await replica(t, url)
  const { taskId } = (await silent.ask('tools/call', { name: 'slow_compute', arguments: { seconds: 60 } })).result
  const short = (await brief.ask('tools/call', { name: 'slow_compute', arguments: { seconds: 0.05 } })).result
  t.equal(short.resultType, 'task')

  t.match(await b.poll(taskId), { status: 'failed', error: { message: /\(last seen never\)/ } })
  // Its 300 ms ttl runs on Redis's clock: waited for by its effect, however long the machine takes.
  await waitUntil(async () => (await b.ask('tasks/get', { taskId: short.taskId })).error !== undefined, 'the short task\'s record to expire', 30_000, 50)
  // A stateless 2025 request of the same token: its owner is the principal alone, as a 2026 request's.
  const { call } = await initializedSession(b.engine, {}, ALICE)
  const listed = (await call('tasks/list', {})).result.tasks.map((task: Message) => task.taskId)
  t.ok(listed.includes(taskId) && !listed.includes(short.taskId), 'the long-lived task listed, the expired one not')
})
