import t from 'tap'
import { createHash } from 'node:crypto'
import { getEventListeners } from 'node:events'
import { Type } from '@sinclair/typebox'
import { defineTool, inputRequired, type RunResult } from '../../src/tool-api/define-tool.js'
import { httpInProcess } from '../helpers/in-process.js'
import { httpOffersTasks } from '../../src/runtime.js'
import { TASKS_EXTENSION } from '../../src/mcp/tasks/tasks.js'
import { MemoryTaskStore, type TaskOwner, type TaskStore } from '../../src/mcp/tasks/task-store.js'
import type { Envelope } from '../../src/mcp/era.js'
import type { RequestChannel } from '../../src/mcp/wire/channel.js'
import { taskTools } from '../fixtures/conformance/conformance-tasks.js'
import { initializedSession, testEngine, testTools } from '../helpers/engine.js'
import { waitUntil } from '../helpers/wait.js'

// MCP tasks over the engine, both eras: a 2025-11-25 session asks for a task per call (params.task) and uses
// tasks/get, tasks/result, tasks/list and tasks/cancel; a 2026-07-28 client declares the tasks extension and polls
// tasks/get. Limits, expiry, owners and shutdown. The official suite's task scenarios are test/conformance's.

type Message = Record<string, any>
const engine = (tasks: Record<string, number> = {}) => testEngine({ tools: [...testTools, ...taskTools()] }, { tasks })
/** A tool's moment of work (below: a timer that outlasts the task window), never a test's wait. */
const sleep = (ms: number): Promise<void> => new Promise(resolve => setTimeout(resolve, ms))

/** A task that asks again whatever it is told (after a moment of work, so it asks as a task). */
const askingTool = defineTool<ReturnType<typeof Type.Object>, RunResult>({
  name: 'always_asks',
  title: 'always_asks',
  category: 'guide',
  description: 'Asks the same question again, whatever the answer; runs as a task.',
  annotations: {},
  input: Type.Object({}),
  task: { support: 'optional' },
  async run () {
    // A timer set after the call's task window (0 ms) fires after it: timers run in order of expiry, so this call
    // always becomes a task, however loaded the machine.
    await sleep(20)
    return inputRequired({ again: { method: 'elicitation/create', params: { message: 'Again?', requestedSchema: { type: 'object', properties: {} } } } })
  }
})

const modernEnvelope = (takesTasks: boolean): Envelope => ({ protocolVersion: '2026-07-28', clientCapabilities: takesTasks ? { extensions: { [TASKS_EXTENSION]: {} } } : {}, clientInfo: undefined, logLevel: undefined })

/** One 2026 request through the engine, as `owner` (an HTTP request's principal: no session in this era). */
async function modern (server: ReturnType<typeof engine>['server'], method: string, params: Message, options: { takesTasks?: boolean, owner?: string | TaskOwner } = {}): Promise<Message> {
  const channel: RequestChannel = { send: () => {} }
  const owner = typeof options.owner === 'string' ? { principal: options.owner } : options.owner
  const { answer } = server.answerModern({ id: 1, method, params }, modernEnvelope(options.takesTasks ?? true), { channel, owner })
  return JSON.parse((await answer).message!) as Message
}

/** Polls a 2026 task (as its client would) until it leaves `working`/`input_required` (or reaches `until`). */
async function poll (server: ReturnType<typeof engine>['server'], taskId: string, until?: string, owner?: string | TaskOwner): Promise<Message> {
  let task: Message = {}
  await waitUntil(async () => {
    task = (await modern(server, 'tasks/get', { taskId }, { owner })).result
    return task.status === until || ['completed', 'failed', 'cancelled'].includes(task.status)
  }, `task ${taskId} to settle`, 30_000, 25)
  return task
}

t.test('2025-11-25: a session asks for a task, polls it, waits for its result, lists it', async (t) => {
  const { call } = await initializedSession(engine())
  const init = await call('initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } })
  const listed = (await call('tools/list')).result.tools as Message[]

  const created = (await call('tools/call', { name: 'slow_compute', arguments: { seconds: 0.2, label: 'x' }, task: { ttl: 60000 } })).result
  const working = (await call('tasks/get', { taskId: created.task.taskId })).result
  const result = (await call('tasks/result', { taskId: created.task.taskId })).result
  const list = (await call('tasks/list', {})).result
  const sync = (await call('tools/call', { name: 'slow_compute', arguments: { seconds: 0 } })).result

  t.match(init, { error: { code: -32600 } }, 'the session was initialized once (the helper did it)')
  t.same(listed.find(tool => tool.name === 'slow_compute')!.execution, { taskSupport: 'optional' })
  t.notOk('execution' in listed.find(tool => tool.name === 'greet')!, 'a tool that never runs as a task says nothing')
  t.match(created, { task: { taskId: /^[\w-]{22}$/, status: 'working', ttl: 3600000, pollInterval: 500, createdAt: /^\d{4}-/ } })
  t.match(working, { taskId: created.task.taskId, status: 'working' })
  t.match(result, { content: [{ type: 'text', text: 'computed x after 0.2 s' }], _meta: { 'io.modelcontextprotocol/related-task': { taskId: created.task.taskId } } })
  t.match(list.tasks, [{ taskId: created.task.taskId, status: 'completed', ttl: 3600000 }])
  t.match(sync, { content: [{ text: 'computed result after 0 s' }] }, 'without params.task the call answers as a request')
  t.notOk('task' in sync)
})

t.test('2025-11-25: tasks/cancel stops the work and answers the cancelled task; an ended task cannot be cancelled; its result says why', async (t) => {
  const { call } = await initializedSession(engine())
  const { task } = (await call('tools/call', { name: 'slow_compute', arguments: { seconds: 60 }, task: {} })).result

  const cancelled = (await call('tasks/cancel', { taskId: task.taskId })).result
  const again = await call('tasks/cancel', { taskId: task.taskId })
  const result = (await call('tasks/result', { taskId: task.taskId })).result

  t.match(cancelled, { taskId: task.taskId, status: 'cancelled', statusMessage: 'cancelled by the client' })
  t.match(again, { error: { code: -32602, message: /already ended \(cancelled\): there is nothing to cancel/ } })
  t.match(result, { isError: true, content: [{ text: /^ERROR CANCELLED: task \S+ \(slow_compute\) was cancelled: cancelled by the client\. Hint: call slow_compute again/ }] })
})

t.test('2025-11-25: a tool error completes the task with isError; a crash fails it, and its result names the failure', async (t) => {
  const { call } = await initializedSession(engine())
  const failing = (await call('tools/call', { name: 'failing_job', arguments: {}, task: {} })).result.task
  const crashing = (await call('tools/call', { name: 'protocol_error_job', arguments: {}, task: {} })).result.task

  const failed = (await call('tasks/result', { taskId: failing.taskId })).result
  const crashed = (await call('tasks/result', { taskId: crashing.taskId })).result
  const states = (await call('tasks/list', {})).result.tasks.map((task: Message) => [task.taskId, task.status])

  t.match(failed, { isError: true, content: [{ text: /^ERROR INTERNAL: the job failed on purpose/ }] })
  t.match(crashed, { isError: true, content: [{ text: /^ERROR INTERNAL: task \S+ \(protocol_error_job\) failed: Tool 'protocol_error_job' failed \(ref [0-9a-f]{8}\)/ }] })
  t.same(new Map(states).get(failing.taskId), 'completed')
  t.same(new Map(states).get(crashing.taskId), 'failed')
})

t.test('2025-11-25: a task that asks for input is input_required while the engine asks the client, then completes', async (t) => {
  const { call, session, sent } = await initializedSession(engine(), { elicitation: {} })
  const { task } = (await call('tools/call', { name: 'confirm_delete', arguments: { filename: 'a.txt' }, task: {} })).result
  await waitUntil(() => sent.some(m => m.method === 'elicitation/create'), 'the engine to ask the client')
  const asked = sent.find(m => m.method === 'elicitation/create')!
  const waiting = (await call('tasks/get', { taskId: task.taskId })).result

  await session.handle({ jsonrpc: '2.0', id: asked.id, result: { action: 'accept', content: { confirm: true } } })
  const result = (await call('tasks/result', { taskId: task.taskId })).result

  t.match(asked.params, { message: 'Delete a.txt?' })
  t.equal(waiting.status, 'input_required')
  t.match(result.content, [{ text: 'confirmed (nothing was deleted: a fixture)' }])
})

t.test('2025-11-25: an unknown task, a cursor, and another session\'s view of a task', async (t) => {
  const { call } = await initializedSession(engine())
  t.match(await call('tasks/get', { taskId: 'no-such-task' }), { error: { code: -32602, message: /no task "no-such-task": it never existed, expired, or belongs to another client/ } })
  t.match(await call('tasks/get', {}), { error: { code: -32602, message: /'taskId' must be the taskId a tools\/call returned/ } })
  t.match(await call('tasks/result', { taskId: 'no-such-task' }), { error: { code: -32602, message: /no task "no-such-task"/ } })
  t.match(await call('tasks/list', { cursor: 'abc' }), { error: { code: -32602, message: /tasks\/list has one page/ } })
})

t.test('2026-07-28: the extension is advertised, a task polled to its inlined result, a required tool refused to a client without it', async (t) => {
  const { server } = engine()
  const discover = (await modern(server, 'server/discover', {})).result
  const created = (await modern(server, 'tools/call', { name: 'slow_compute', arguments: { seconds: 0.1 } })).result
  const done = await poll(server, created.taskId)
  const refused = await modern(server, 'tools/call', { name: 'failing_job', arguments: {} }, { takesTasks: false })
  const ungated = await modern(server, 'tasks/get', { taskId: created.taskId }, { takesTasks: false })
  const plain = (await modern(server, 'tools/call', { name: 'slow_compute', arguments: { seconds: 0.1 } }, { takesTasks: false })).result

  t.same(discover.capabilities.extensions, { [TASKS_EXTENSION]: {} })
  t.notOk('tasks' in discover.capabilities, 'no 2025 capabilities.tasks slot')
  t.match(created, { resultType: 'task', taskId: /^[\w-]{22}$/, status: 'working', ttlMs: 3600000, pollIntervalMs: 500 })
  t.notOk('task' in created, 'flat: no wrapper')
  t.match(done, { status: 'completed', result: { content: [{ text: 'computed result after 0.1 s' }] }, resultType: 'complete' })
  t.match(refused, { error: { code: -32021, data: { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } } } })
  t.match(ungated, { error: { code: -32021 } })
  t.match(plain, { resultType: 'complete', content: [{ text: 'computed result after 0.1 s' }] }, 'an optional task tool answers a client without the extension as a request')
})

t.test('2026-07-28: a task is its owner\'s: another principal gets the unknown-task error for it', async (t) => {
  const { server } = engine()
  const { taskId } = (await modern(server, 'tools/call', { name: 'slow_compute', arguments: { seconds: 60 } }, { owner: 'alice' })).result

  const bob = await modern(server, 'tasks/get', { taskId }, { owner: 'bob' })
  const bobCancel = await modern(server, 'tasks/cancel', { taskId }, { owner: 'bob' })
  const alice = (await modern(server, 'tasks/get', { taskId }, { owner: 'alice' })).result
  await modern(server, 'tasks/cancel', { taskId }, { owner: 'alice' })

  t.match(bob, { error: { code: -32602, message: /belongs to another client/ } })
  t.match(bobCancel, { error: { code: -32602 } })
  t.equal(alice.status, 'working')
  t.equal((await poll(server, taskId, undefined, 'alice')).status, 'cancelled')
})

t.test('limits: running tasks per owner, how long a task may run, how long its record is kept', async (t) => {
  const { server } = engine({ maxLivePerOwner: 1, timeoutMs: 300, ttlMs: 1500 })
  const first = (await modern(server, 'tools/call', { name: 'slow_compute', arguments: { seconds: 60 } })).result
  const second = await modern(server, 'tools/call', { name: 'slow_compute', arguments: { seconds: 60 } })
  const other = (await modern(server, 'tools/call', { name: 'slow_compute', arguments: { seconds: 0.1 } }, { owner: 'carol' })).result

  t.match(second, { error: { code: -32600, message: /1 tasks of this client are still running \(at most 1\): wait for one to finish, or cancel one with tasks\/cancel/ } })
  t.equal(other.resultType, 'task', 'another owner has a limit of its own')
  t.match(await poll(server, first.taskId), { status: 'completed', result: { isError: true, content: [{ text: /^ERROR TIMEOUT: slow_compute did not finish within 300 ms/ }] } }, 'the task\'s own allowance ends it')
  // The record's 1.5 s ttl runs on the real clock: its end is waited for, however long the machine takes to see it.
  await waitUntil(async () => (await modern(server, 'tasks/get', { taskId: first.taskId })).error !== undefined, 'the record\'s ttl to pass', 30_000, 100)
  t.match(await modern(server, 'tasks/get', { taskId: first.taskId }), { error: { code: -32602, message: /expired/ } }, 'gone once its ttl passed')
})

t.test('shutdown: a running task ends cancelled, its record says so', async (t) => {
  const { server } = engine()
  const { taskId } = (await modern(server, 'tools/call', { name: 'slow_compute', arguments: { seconds: 60 } })).result

  await server.stopCalls(0)

  t.match(await poll(server, taskId), { status: 'cancelled' })
})

t.test('2026-07-28: answers that are not objects are -32602; a task that keeps asking ends after the rounds allowed', async (t) => {
  const { server } = testEngine({ tools: [...testTools, askingTool] })
  const { taskId } = (await modern(server, 'tools/call', { name: 'always_asks', arguments: {} })).result
  const asking = await poll(server, taskId, 'input_required')

  t.match(await modern(server, 'tasks/update', { taskId, inputResponses: 'yes' }), { error: { code: -32602, message: /'inputResponses' must map each key/ } })
  t.match(await modern(server, 'tasks/update', { taskId, inputResponses: { again: 'yes' } }), { error: { code: -32602 } })
  let task = asking
  for (let round = 0; round < 20 && task.status === 'input_required'; round++) {
    t.match(await modern(server, 'tasks/update', { taskId, inputResponses: { again: { action: 'accept', content: { more: true } } } }), { result: { resultType: 'complete' } })
    task = await poll(server, taskId, 'input_required')
    if (task.status === 'working') task = await poll(server, taskId, 'input_required')
  }
  t.match(task, { status: 'completed', result: { isError: true, content: [{ text: /^ERROR INPUT_ROUNDS_EXCEEDED: always_asks still asked for input after 8 rounds/ }] } })
})

t.test('over HTTP with tokens: a task is its principal\'s, another token\'s tasks/get finds nothing', async (t) => {
  const tokens = { alice: 'alice-token-0123456789', bob: 'bob-token-0123456789' }
  const digests = Object.entries(tokens).map(([name, token]) => `${name}:${createHash('sha256').update(token).digest('hex')}`).join(',')
  const http = await httpInProcess(t, ['--root', t.testdir({ 'a.txt': 'x\n' }), '--code-index', 'off', '--max-event-loop-delay-ms', '0'], { WORKSPACE_MCP_AUTH_TOKENS: digests }, { tools: taskTools() })
  const post = async (who: keyof typeof tokens, method: string, params: Message, name: string): Promise<Message> => {
    const res = await fetch(http.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28', 'mcp-method': method, 'mcp-name': name, authorization: `Bearer ${tokens[who]}` },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: { ...params, _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': { extensions: { [TASKS_EXTENSION]: {} } } } } })
    })
    return await res.json() as Message
  }
  const { taskId } = (await post('alice', 'tools/call', { name: 'slow_compute', arguments: { seconds: 60 } }, 'slow_compute')).result

  t.match(await post('bob', 'tasks/get', { taskId }, taskId), { error: { code: -32602, message: /belongs to another client/ } })
  t.match(await post('alice', 'tasks/get', { taskId }, taskId), { result: { taskId, status: 'working' } })
  t.match(await post('alice', 'tasks/cancel', { taskId }, taskId), { result: { resultType: 'complete' } })
})

t.test('2025-11-25: a tasks/result still waiting when its session closes ends without an answer; the task runs on', async (t) => {
  const { server } = engine()
  // The session as two replicas would both know it (its principal and id): the task is that session's.
  const owner: TaskOwner = { principal: '', session: 'shared-session' }
  const { call, session } = await initializedSession({ server } as ReturnType<typeof engine>, {}, owner)
  const { task } = (await call('tools/call', { name: 'slow_compute', arguments: { seconds: 60 }, task: {} })).result
  const listening = (): number => getEventListeners(session.closedSignal, 'abort').length
  const before = listening()
  const waiting = call('tasks/result', { taskId: task.taskId })
  const late = call('tasks/result', { taskId: task.taskId })
  await waitUntil(() => listening() === before + 2, 'both tasks/result to wait on the task')

  session.close()

  t.equal(await waiting, undefined, 'no answer on a closed session')
  t.equal(await late, undefined)
  t.equal((await modern(server, 'tasks/get', { taskId: task.taskId }, { owner })).result.status, 'working', 'closed here, the session may go on elsewhere: its task runs on')
  await modern(server, 'tasks/cancel', { taskId: task.taskId }, { owner })
})

t.test('2025-11-25: each change of a task is a notifications/tasks/status where the session\'s messages go; a session with nowhere to send gets none', async (t) => {
  const { call, sent } = await initializedSession(engine(), { elicitation: {} })
  const { task } = (await call('tools/call', { name: 'slow_compute', arguments: { seconds: 0.1 }, task: {} })).result
  await call('tasks/result', { taskId: task.taskId })

  const statuses = sent.filter(m => m.method === 'notifications/tasks/status').map(m => (m.params as Message))
  t.match(statuses, [{ taskId: task.taskId, status: 'completed', ttl: 3600000, pollInterval: 500 }])

  const { server } = engine()
  const quiet = server.openSession({})
  await quiet.handle({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } } })
  const created = JSON.parse((await quiet.handle({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'slow_compute', arguments: { seconds: 0.05 }, task: {} } }))!) as Message
  const result = JSON.parse((await quiet.handle({ jsonrpc: '2.0', id: 3, method: 'tasks/result', params: { taskId: created.result.task.taskId } }))!) as Message
  t.match(result.result.content, [{ text: 'computed result after 0.05 s' }])
})

t.test('stateless HTTP without a shared task store offers no tasks: a task asked for is answered in full, in either era', async (t) => {
  // Behind a balancer the next request may reach another replica, which would not know the task.
  const stateless = await httpInProcess(t, ['--root', t.testdir({ 'a.txt': 'x\n' }), '--code-index', 'off', '--mode', 'stateless', '--max-event-loop-delay-ms', '0'], {}, { tools: taskTools() })
  const post = async (body: Message, modernEra: boolean): Promise<Message> => {
    const res = await fetch(stateless.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...(modernEra ? { 'mcp-protocol-version': '2026-07-28', 'mcp-method': body.method, ...(body.params?.name !== undefined ? { 'mcp-name': body.params.name } : {}) } : { 'mcp-protocol-version': '2025-11-25' }) },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, ...body })
    })
    return await res.json() as Message
  }
  const initialized = await post({ method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: { tasks: {} }, clientInfo: { name: 'x', version: '1' } } }, false)
  t.notOk('tasks' in initialized.result.capabilities, '2025: no tasks capability')
  t.same(initialized.result.capabilities.tools, { listChanged: false })
  const legacy = await post({ method: 'tools/call', params: { name: 'slow_compute', arguments: { seconds: 0.1, label: 'now' }, task: { ttl: 60_000 } } }, false)
  t.match(legacy, { result: { content: [{ type: 'text', text: /now/ }] } }, '2025: params.task is set aside, the call answers')
  t.notOk('task' in legacy.result)

  const meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': { extensions: { [TASKS_EXTENSION]: {} } } }
  const discover = await post({ method: 'server/discover', params: { _meta: meta } }, true)
  t.notOk(discover.result.capabilities.extensions?.[TASKS_EXTENSION], '2026: no tasks extension')
  const modernCall = await post({ method: 'tools/call', params: { name: 'slow_compute', arguments: { seconds: 0.1, label: 'then' }, _meta: meta } }, true)
  t.match(modernCall, { result: { resultType: 'complete', content: [{ type: 'text', text: /then/ }] } }, '2026: a client that takes tasks gets the answer')

  const withRedisConfig = { mode: 'stateless', redisUrl: 'redis://127.0.0.1:1' } as const
  t.ok(httpOffersTasks(withRedisConfig), 'a stateless replica with Redis offers them (its records are shared)')
  t.ok(httpOffersTasks({ mode: 'stateful', redisUrl: '' }), 'a stateful server: a session stays on its replica')
  t.notOk(httpOffersTasks({ mode: 'stateless', redisUrl: '' }))
})

t.test('a task that expires between its read and its change: tasks/cancel answers it unknown, and a lost one is shown as it was read', async (t) => {
  const memory = new MemoryTaskStore()
  // The record is read, then gone before the change lands (its ttl ran out in between).
  const vanishing: TaskStore = { ...bound(memory), transition: async () => undefined, lastBeat: async () => 0 }
  const { server } = testEngine({ tools: [...testTools, ...taskTools()] }, { taskStore: vanishing, tasks: { heartbeatMs: 10 } })
  const other = testEngine({ tools: [...testTools, ...taskTools()] }, { taskStore: vanishing, tasks: { heartbeatMs: 10 } })
  const { taskId } = (await modern(server, 'tools/call', { name: 'slow_compute', arguments: { seconds: 60 } }, { owner: 'alice' })).result

  const lost = (await modern(other.server, 'tasks/get', { taskId }, { owner: 'alice' })).result
  const cancelled = await modern(server, 'tasks/cancel', { taskId }, { owner: 'alice' })

  t.match(lost, { taskId, status: 'working' }, 'read on a replica that does not run it, past its beats: shown as read')
  t.match(cancelled, { error: { code: -32602, message: /it never existed, expired, or belongs to another client/ } })
  await server.stopCalls(0)
})

/** A store's methods bound to it, to spread into a store with some replaced. */
function bound (store: TaskStore): TaskStore {
  return { create: r => store.create(r), load: id => store.load(id), list: o => store.list(o), transition: (id, c) => store.transition(id, c), beat: (id, ttl) => store.beat(id, ttl), lastBeat: id => store.lastBeat(id), leaveAnswers: (id, a, ttl) => store.leaveAnswers(id, a, ttl), takeAnswers: id => store.takeAnswers(id) }
}

t.test('a stateless 2025 session opened without an owner has no identity: its task is reached by id alone, and tasks/list is refused', async (t) => {
  const { server } = engine()
  const ask = async (method: string, params: Message): Promise<Message> => JSON.parse((await server.openSession({ stateless: true }).handle({ jsonrpc: '2.0', id: 1, method, params }))!) as Message

  const { task } = (await ask('tools/call', { name: 'slow_compute', arguments: { seconds: 60 }, task: {} })).result
  const listed = await ask('tasks/list', {})
  const got = (await ask('tasks/get', { taskId: task.taskId })).result

  t.match(listed, { error: { code: -32600, message: /tasks\/list needs to know whose tasks to list/ } })
  t.match(got, { taskId: task.taskId, status: 'working' }, 'another stateless request, with the id')
  await ask('tasks/cancel', { taskId: task.taskId })
})
