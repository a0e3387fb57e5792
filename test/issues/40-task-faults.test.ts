import t, { type Test } from 'tap'
import pino from 'pino'
import { createRedisStores } from '../../src/http/redis-stores.js'
import { MemoryTaskStore, type TaskOwner, type TaskStore } from '../../src/mcp/tasks/task-store.js'
import { TASKS_EXTENSION } from '../../src/mcp/tasks/tasks.js'
import { createDegradations } from '../../src/services/degradations.js'
import { systemClock } from '../../src/services/clock.js'
import { taskTools } from '../fixtures/conformance/conformance-tasks.js'
import { captureLogger, gatedTaskTool, initializedSession, testEngine, testTools } from '../helpers/engine.js'
import { findRedis, redisServer } from '../helpers/redis.js'
import { waitUntil } from '../helpers/wait.js'

// Issue 40, items 3 and 7: no task store failure ends the process. A store that fails on each of its operations in
// turn: the request that needed it gets an error, background work (heartbeats, a task's end) logs the failure with
// its cause and reports it, a task whose outcome cannot be written is reported failed wherever it can be, and the
// server answers the next call. Then the same with redis-server killed while a task runs.

type Message = Record<string, any>
type Operation = keyof TaskStore
const OWNER: TaskOwner = { principal: 'token:alice', session: 'session-1' }
const ALICE: TaskOwner = { principal: 'token:alice' }
// Lost after 5 missed beats (0.5 s): short for the test, long enough for a machine busy with other test files.
const HEARTBEAT_MS = 100

// Nothing a failing store does may reach Node as an unhandled rejection (by default that ends the process).
const unhandled: unknown[] = []
const onUnhandled = (reason: unknown): void => { unhandled.push(reason) }
process.on('unhandledRejection', onUnhandled)
t.teardown(() => {
  process.off('unhandledRejection', onUnhandled)
})

/** `store`, with an operation rejecting (as a lost connection would) as many times as `failing` says. */
function failingStore (store: TaskStore, failing: Map<Operation, number>): TaskStore {
  return new Proxy(store, {
    get (target, key: Operation) {
      const member = target[key]
      return async (...args: unknown[]): Promise<unknown> => {
        const left = failing.get(key) ?? 0
        if (left > 0) {
          failing.set(key, left - 1)
          throw Object.assign(new Error(`connect ECONNREFUSED 127.0.0.1:6379 (${key})`), { code: 'ECONNREFUSED' })
        }
        return await (member as (...a: unknown[]) => Promise<unknown>).apply(target, args)
      }
    }
  })
}

/** A task that works until `release()`, then answers. */
function gatedTool () {
  const { tool, arm } = gatedTaskTool('the gated work is done')
  return { tool, release: arm() }
}

/** A replica over `store` (shared with others, or its own), its log, its degradation register and the failures to inject. */
function replica (store: TaskStore, tools = [gatedTool().tool], maxLivePerOwner = 1) {
  const { log, lines } = captureLogger()
  const degradations = createDegradations(log)
  const failing = new Map<Operation, number>()
  const engine = testEngine({ tools: [...testTools, ...taskTools(), ...tools], services: { clock: systemClock, degradations } }, { log, taskStore: failingStore(store, failing), tasks: { heartbeatMs: HEARTBEAT_MS, maxLivePerOwner } })
  const modern = async (method: string, params: Message): Promise<Message> => {
    const { answer } = engine.server.answerModern({ id: 1, method, params }, { protocolVersion: '2026-07-28', clientCapabilities: { extensions: { [TASKS_EXTENSION]: {} } }, clientInfo: undefined, logLevel: undefined }, { owner: ALICE })
    return JSON.parse((await answer).message as string) as Message
  }
  return { engine, lines, degradations, failing, modern }
}

const degraded = (r: ReturnType<typeof replica>): boolean => r.degradations.current().some(d => d.component === 'task-heartbeat')

/** The server still answers a plain call. */
async function serving (t: Test, call: (method: string, params: Message) => Promise<Message>): Promise<void> {
  t.match(await call('tools/call', { name: 'echo_text', arguments: { text: 'still here' } }), { result: { content: [{ text: 'still here' }] } }, 'the server answers the next call')
}

t.test('a task store that fails on each operation in turn: the request gets an error, background work reports it, the server serves on', async (t) => {
  await t.test('create (and the first beat): the call is an error, and the task never counts against the running limit', async (t) => {
    const r = replica(new MemoryTaskStore())
    const { call } = await initializedSession(r.engine, {}, OWNER)
    for (const op of ['create', 'beat'] as const) {
      r.failing.set(op, 1)
      t.match(await call('tools/call', { name: 'slow_compute', arguments: { seconds: 60 }, task: {} }), { error: { code: -32603 } }, `${op} failed: an internal error`)
      t.match(r.lines.find(l => l.msg === 'request failed' && (l.err as Message).message.includes(`(${op})`)), { level: 50, err: { code: 'ECONNREFUSED', stack: /Error: connect ECONNREFUSED/ } }, 'logged with its cause')
    }
    const { task } = (await call('tools/call', { name: 'slow_compute', arguments: { seconds: 60 }, task: {} })).result
    t.equal(task.status, 'working', 'the limit of one running task is free: the failed ones never counted')
    await serving(t, call)
    await call('tasks/cancel', { taskId: task.taskId })
  })

  await t.test('load, beat and takeAnswers in the heartbeat: reported degraded with the cause, recovered by the next beat that works', async (t) => {
    const r = replica(new MemoryTaskStore())
    const { call } = await initializedSession(r.engine, {}, OWNER)
    const { task } = (await call('tools/call', { name: 'slow_compute', arguments: { seconds: 60 }, task: {} })).result
    for (const op of ['load', 'beat'] as const) {
      r.failing.set(op, Infinity)
      await waitUntil(() => degraded(r), `${op}: degraded`)
      r.failing.delete(op)
      await waitUntil(() => !degraded(r), `${op}: recovered`)
    }
    t.match(await call('tasks/get', { taskId: task.taskId }), { result: { status: 'working' } }, 'the task ran on throughout')
    t.match(r.lines.filter(l => l.component === 'task-heartbeat').map(l => [l.level, l.msg]), [
      [40, /^degraded: task-heartbeat: running tasks cannot reach the task store/], [30, 'recovered: task-heartbeat'],
      [40, /^degraded: task-heartbeat/], [30, 'recovered: task-heartbeat']
    ])
    t.match(r.lines.find(l => l.component === 'task-heartbeat'), { err: { code: 'ECONNREFUSED', message: /\(load\)/ } }, 'the cause is on the line')
    await call('tasks/cancel', { taskId: task.taskId })

    // takeAnswers: a task waits for answers left on another replica; its replica cannot take them for a while.
    const shared = new MemoryTaskStore()
    const [a, b] = [replica(shared), replica(shared)]
    const asking = (await a.modern('tools/call', { name: 'confirm_delete', arguments: { filename: 'x.txt' } })).result
    await waitUntil(async () => (await b.modern('tasks/get', { taskId: asking.taskId })).result.status === 'input_required', 'asks')
    a.failing.set('takeAnswers', Infinity)
    t.match((await b.modern('tasks/update', { taskId: asking.taskId, inputResponses: { confirm_delete: { action: 'accept', content: { confirm: true } } } })).result, { resultType: 'complete' })
    await waitUntil(() => degraded(a), 'takeAnswers: degraded')
    a.failing.delete('takeAnswers')
    await waitUntil(async () => (await b.modern('tasks/get', { taskId: asking.taskId })).result.status === 'completed', 'the answers reach the task once the store works')
    t.notOk(degraded(a), 'recovered')
  })

  await t.test('transition at a task\'s end, once: the outcome could not be kept, so the task ends failed and says why', async (t) => {
    const { tool, release } = gatedTool()
    const r = replica(new MemoryTaskStore(), [tool])
    const { call, sent } = await initializedSession(r.engine, {}, OWNER)
    const { task } = (await call('tools/call', { name: 'gated_job', arguments: {}, task: {} })).result
    r.failing.set('transition', 1)

    release()
    const result = (await call('tasks/result', { taskId: task.taskId })).result

    t.match(result, { isError: true, content: [{ text: /failed: the server could not store this task's outcome \(its task store failed\); call the tool again/ }] })
    t.match(sent.filter(m => m.method === 'notifications/tasks/status').map(m => (m.params as Message).status), ['failed'], 'its session is told failed, once')
    t.match(r.lines.find(l => l.msg === 'task: its outcome could not be stored; storing it as failed'), { level: 50, taskId: task.taskId, status: 'completed', err: { code: 'ECONNREFUSED' } })
    await serving(t, call)
  })

  await t.test('transition at a task\'s end, every time: the session is told failed, both failures are logged, other replicas report it lost', async (t) => {
    const { tool, release } = gatedTool()
    const shared = new MemoryTaskStore()
    const r = replica(shared, [tool])
    const other = replica(shared)
    const { call, sent } = await initializedSession(r.engine, {}, OWNER)
    const elsewhere = await initializedSession(other.engine, {}, OWNER)
    const { task } = (await call('tools/call', { name: 'gated_job', arguments: {}, task: {} })).result
    r.failing.set('transition', Infinity)

    release()
    await waitUntil(() => sent.some(m => m.method === 'notifications/tasks/status'), 'the session is told')

    t.match(sent.filter(m => m.method === 'notifications/tasks/status').map(m => m.params), [{ taskId: task.taskId, status: 'failed', statusMessage: 'its outcome could not be stored' }])
    t.same(r.lines.filter(l => l.level === 50).map(l => [l.msg, (l.err as Message).code]), [
      ['task: its outcome could not be stored; storing it as failed', 'ECONNREFUSED'],
      ['task: the task store failed again; the task is reported failed to its session, and lost elsewhere', 'ECONNREFUSED']
    ])
    await serving(t, call)
    let lost: Message = {}
    // Asked as a client polls, once a beat: the record turns failed once its beats stop.
    await waitUntil(async () => { lost = (await elsewhere.call('tasks/get', { taskId: task.taskId })).result; return lost.status !== 'working' }, 'the other replica to see the task lost', 30_000, HEARTBEAT_MS)
    t.match(lost, { status: 'failed', statusMessage: 'lost: its server stopped' }, 'another replica reports it failed once its beats stopped')
  })

  await t.test('load, list, lastBeat and leaveAnswers behind a request: that request is an internal error, the next is answered', async (t) => {
    const shared = new MemoryTaskStore()
    const [a, b] = [replica(shared, undefined, 2), replica(shared, undefined, 2)]
    const { call } = await initializedSession(a.engine, {}, OWNER)
    const onB = await initializedSession(b.engine, {}, OWNER)
    const { task } = (await call('tools/call', { name: 'slow_compute', arguments: { seconds: 60 }, task: {} })).result
    const asking = (await a.modern('tools/call', { name: 'confirm_delete', arguments: { filename: 'y.txt' } })).result
    await waitUntil(async () => (await b.modern('tasks/get', { taskId: asking.taskId })).result.status === 'input_required', 'asks')

    const cases: Array<[Operation, () => Promise<Message>]> = [
      ['load', async () => await call('tasks/get', { taskId: task.taskId })],
      ['list', async () => await call('tasks/list', {})],
      ['lastBeat', async () => await onB.call('tasks/get', { taskId: task.taskId })],
      ['leaveAnswers', async () => await b.modern('tasks/update', { taskId: asking.taskId, inputResponses: { confirm_delete: { action: 'decline' } } })]
    ]
    for (const [op, request] of cases) {
      const r = op === 'load' || op === 'list' ? a : b
      r.failing.set(op, 1)
      t.match(await request(), { error: { code: -32603 } }, `${op}: an internal error`)
      t.match(await request(), { result: {} }, `${op}: the same request, once the store works`)
    }
    await serving(t, call)
    await call('tasks/cancel', { taskId: task.taskId })
    await a.modern('tasks/cancel', { taskId: asking.taskId })
  })

  t.same(unhandled, [], 'no rejection went unhandled')
})

const skip = findRedis() === undefined ? 'redis-server is not installed (apt-get install redis-server; .ci/run installs it)' : false

t.test('redis-server killed while tasks run: the ending task is reported failed to its session, heartbeats degrade and recover, the replica serves on', { skip }, async (t) => {
  const redis = await redisServer(t)
  const stores = await createRedisStores({ url: redis.url, eventTtlMs: 60_000, log: pino({ level: 'silent' }) })
  t.teardown(() => stores.close())
  const { tool, release } = gatedTool()
  const r = replica(stores.tasks, [tool], 2)
  t.teardown(() => r.engine.server.stopCalls(0))
  const { call, sent } = await initializedSession(r.engine, {}, OWNER)
  const ending = (await call('tools/call', { name: 'gated_job', arguments: {}, task: {} })).result.task
  const running = (await call('tools/call', { name: 'slow_compute', arguments: { seconds: 60 }, task: {} })).result.task

  await redis.kill()
  await waitUntil(() => degraded(r), 'heartbeats degraded')
  release()
  await waitUntil(() => sent.some(m => m.method === 'notifications/tasks/status' && (m.params as Message).taskId === ending.taskId), 'the session is told how the task ended')

  t.match(sent.filter(m => m.method === 'notifications/tasks/status').map(m => m.params), [{ taskId: ending.taskId, status: 'failed', statusMessage: 'its outcome could not be stored' }])
  t.equal(r.lines.filter(l => l.level === 50 && String(l.msg).startsWith('task: ')).length, 2, 'both failed writes logged')
  await serving(t, call)
  t.match(await call('tasks/get', { taskId: running.taskId }), { error: { code: -32603 } }, 'tasks/get needs the store: an internal error, not a crash')
  t.ok(degraded(r), 'still degraded while Redis is away')

  // Back, and empty (no persistence): the running task's record is gone, so its replica stops it; beats work again.
  const back = await redisServer(t, redis.port)
  t.equal(back.url, redis.url)
  await waitUntil(() => !degraded(r), 'heartbeats recovered')
  t.match(r.lines.filter(l => l.component === 'task-heartbeat').map(l => l.msg), [/^degraded: task-heartbeat/, 'recovered: task-heartbeat'])
  await waitUntil(() => r.engine.server.activeCalls().length === 0, 'the task whose record is gone is stopped')
  const { task } = (await call('tools/call', { name: 'slow_compute', arguments: { seconds: 60 }, task: {} })).result
  t.equal(task.status, 'working', 'tasks start again')
  await call('tasks/cancel', { taskId: task.taskId })
  t.same(unhandled, [], 'no rejection went unhandled')
})
