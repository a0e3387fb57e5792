import t, { type Test } from 'tap'
import { createHash } from 'node:crypto'
import { PassThrough } from 'node:stream'
import { serveStdio } from '../../src/mcp/stdio.js'
import { TASKS_EXTENSION } from '../../src/mcp/tasks/tasks.js'
import { taskTools } from '../fixtures/conformance/conformance-tasks.js'
import { testEngine, testTools } from '../helpers/engine.js'
import { httpInProcess } from '../helpers/in-process.js'
import { findRedis, startRedis } from '../helpers/redis.js'
import { stdoutLines } from '../helpers/rpc.js'

// Issue 40, item 1: a task belongs to the session that started it. Another session — on the same server or another
// replica, in either protocol era, over stdio or HTTP, with or without authentication, two sessions of one token
// included — gets for it exactly what it gets for a task id that never existed: the same bytes from tasks/get,
// tasks/result, tasks/cancel and tasks/update (the id it sent aside), a tasks/list without it, and the task runs on
// untouched. Where requests carry no identity at all (stateless HTTP without auth), tasks/list is refused.

type Message = Record<string, any>
type Era = 'legacy' | 'modern'

/** One client as a test drives it: its era, and one request's raw answer (always JSON-RPC id 7, so answers compare byte for byte; over HTTP, the status first). */
interface Client {
  era: Era
  ask: (method: string, params: Message) => Promise<string>
}

/** The JSON-RPC message of an answer (an HTTP one starts with its status and a newline). */
const messageOf = (answer: string): Message => JSON.parse(answer.slice(answer.indexOf('{'))) as Message

const ID = 7
const request = (method: string, params: Message): string => JSON.stringify({ jsonrpc: '2.0', id: ID, method, params })
const modernMeta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': { extensions: { [TASKS_EXTENSION]: {} } } }
const initialize = { protocolVersion: '2025-11-25', capabilities: { tasks: {} }, clientInfo: { name: 'owners', version: '1' } }

/** A stdio connection to `engine`'s server (the real framing over streams), pinned to `era` by its first request. */
async function stdioClient (t: Test, server: ReturnType<typeof testEngine>['server'], era: Era): Promise<Client> {
  const input = new PassThrough()
  const output = new PassThrough()
  const stdio = serveStdio({ server, input, output, log: testEngine().log })
  t.teardown(() => { stdio.close(); input.end() })
  const { lines } = stdoutLines(output, () => 'stdio')
  let seen = 0
  const ask = async (method: string, params: Message): Promise<string> => {
    input.write(request(method, era === 'modern' ? { ...params, _meta: modernMeta } : params) + '\n')
    for (;;) {
      const found = lines.slice(seen).findIndex(line => (JSON.parse(line) as Message).id === ID)
      if (found >= 0) {
        seen += found + 1
        return lines[seen - 1]
      }
      await new Promise(resolve => output.once('data', resolve))
    }
  }
  if (era === 'legacy') await ask('initialize', initialize)
  return { era, ask }
}

/** An HTTP response as compared: its status, a newline, and the JSON-RPC answer (its body, or the last message of its SSE stream). */
async function answerOf (res: Response): Promise<string> {
  const text = await res.text()
  if (!(res.headers.get('content-type') ?? '').startsWith('text/event-stream')) return `${res.status}\n${text}`
  return `${res.status}\n${text.split('\n').filter(line => line.startsWith('data: ') && line.length > 6).map(line => line.slice(6)).at(-1) as string}`
}

/** An HTTP client of `url` with `token` (or none): a 2025 session (stateful), a 2025 client without one (stateless), or 2026 requests. */
async function httpClient (url: string, era: Era, token?: string, stateless = false): Promise<Client & { session?: string, through: (url: string) => Client }> {
  const auth: Record<string, string> = token === undefined ? {} : { authorization: `Bearer ${token}` }
  let session: string | undefined
  if (era === 'legacy' && !stateless) {
    const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...auth }, body: request('initialize', initialize) })
    const body = await res.text()
    const id = res.headers.get('mcp-session-id')
    if (id === null) throw new Error(`initialize: ${res.status} ${body}`)
    session = id
  }
  const through = (target: string): Client => ({
    era,
    ask: async (method, params) => {
      const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...auth }
      if (era === 'modern') Object.assign(headers, { 'mcp-protocol-version': '2026-07-28', 'mcp-method': method, 'mcp-name': String(params.name ?? params.taskId ?? '') })
      else Object.assign(headers, { 'mcp-protocol-version': '2025-11-25' }, session === undefined ? {} : { 'mcp-session-id': session })
      return await answerOf(await fetch(target, { method: 'POST', headers, body: request(method, era === 'modern' ? { ...params, _meta: modernMeta } : params) }))
    }
  })
  return { ...through(url), session, through }
}

/** Starts a long task as `client`; its id. */
async function startTask (client: Client): Promise<string> {
  const created = messageOf(await client.ask('tools/call', { name: 'slow_compute', arguments: { seconds: 60 }, ...(client.era === 'legacy' ? { task: {} } : {}) })) as Message
  const taskId = client.era === 'legacy' ? created.result?.task?.taskId : created.result?.taskId
  if (typeof taskId !== 'string') throw new Error(`no task: ${JSON.stringify(created)}`)
  return taskId
}

/** A task id of the same shape that no server ever gave out. */
const unknownId = (): string => Buffer.from(crypto.getRandomValues(new Uint8Array(16))).toString('base64url')

/** The task methods of an era, with the params each takes besides the id. */
const METHODS: Record<Era, Array<[string, Message]>> = {
  legacy: [['tasks/get', {}], ['tasks/result', {}], ['tasks/cancel', {}]],
  modern: [['tasks/get', {}], ['tasks/update', { inputResponses: { any: { action: 'accept' } } }], ['tasks/cancel', {}]]
}

/**
 * `owner` starts a task; `other` asks for it with every task method of its era and gets, byte for byte, what it gets
 * for an id that never existed; its tasks/list does not change; the task still runs for its owner. `readers` see it
 * as its owner does (the same session through another replica).
 */
async function isolated (t: Test, owner: Client, other: Client, readers: Client[] = []): Promise<void> {
  const listBefore = other.era === 'legacy' ? await other.ask('tasks/list', {}) : undefined
  const taskId = await startTask(owner)
  for (const [method, params] of METHODS[other.era]) {
    const unknown = unknownId()
    const foreign = await other.ask(method, { ...params, taskId })
    const never = await other.ask(method, { ...params, taskId: unknown })
    t.match(messageOf(foreign), { error: { code: -32602 } }, `${method}: refused`)
    t.equal(foreign.replaceAll(taskId, '<id>'), never.replaceAll(unknown, '<id>'), `${method}: the same bytes as for an unknown id`)
  }
  if (listBefore !== undefined) t.equal(await other.ask('tasks/list', {}), listBefore, 'tasks/list: nothing new')
  for (const reader of [owner, ...readers]) {
    t.match(messageOf(await reader.ask('tasks/get', { taskId })), { result: { taskId, status: 'working' } }, 'its owner sees it running, untouched')
  }
  if (owner.era === 'legacy') t.match(messageOf(await owner.ask('tasks/list', {})), { result: { tasks: [{ taskId }] } }, 'and lists it')
  await owner.ask('tasks/cancel', { taskId })
}

const tokens = { alice: 'alice-token-0123456789', bob: 'bob-token-0123456789' }
const TOKENS_ENV = { WORKSPACE_MCP_AUTH_TOKENS: Object.entries(tokens).map(([name, token]) => `${name}:${createHash('sha256').update(token).digest('hex')}`).join(',') }
// No load shedding: on a machine busy with other test files the event loop's delay is not what these tests are about.
const serve = async (t: Test, args: string[] = [], env: NodeJS.ProcessEnv = {}): Promise<string> =>
  (await httpInProcess(t, ['--root', t.testdir({ 'a.txt': 'x\n' }), '--code-index', 'off', '--max-event-loop-delay-ms', '0', ...args], env, { tools: taskTools() })).url

t.test('stdio: another connection, in either era, finds nothing of a connection\'s task', async (t) => {
  const { server } = testEngine({ tools: [...testTools, ...taskTools()] })
  for (const era of ['legacy', 'modern'] as const) {
    await t.test(era, async (t) => {
      await isolated(t, await stdioClient(t, server, era), await stdioClient(t, server, era))
    })
  }
})

t.test('HTTP without auth, one server: another session finds nothing of a session\'s task; nor does a 2026 request, which has no identity', async (t) => {
  const url = await serve(t)
  const owner = await httpClient(url, 'legacy')
  await isolated(t, owner, await httpClient(url, 'legacy'))
  await isolated(t, owner, await httpClient(url, 'modern'))
})

t.test('HTTP with tokens, one server: another session of the same token, and another token, find nothing; 2026: another principal finds nothing', async (t) => {
  const url = await serve(t, [], TOKENS_ENV)
  const alice = await httpClient(url, 'legacy', tokens.alice)
  await isolated(t, alice, await httpClient(url, 'legacy', tokens.alice))
  await isolated(t, alice, await httpClient(url, 'legacy', tokens.bob))
  await isolated(t, await httpClient(url, 'modern', tokens.alice), await httpClient(url, 'modern', tokens.bob), [await httpClient(url, 'modern', tokens.alice)])
})

const skip = findRedis() === undefined ? 'redis-server is not installed (apt-get install redis-server; .ci/run installs it)' : false

t.test('two replicas sharing Redis, without auth: a session on the other replica finds nothing; the same session there sees its task', { skip }, async (t) => {
  const redis = await startRedis(t)
  const [one, two] = [await serve(t, ['--redis-url', redis]), await serve(t, ['--redis-url', redis])]
  const owner = await httpClient(one, 'legacy')
  await isolated(t, owner, await httpClient(two, 'legacy'), [owner.through(two)])
})

t.test('two replicas sharing Redis, with tokens: another session of the token on the other replica finds nothing; 2026: another principal finds nothing', { skip }, async (t) => {
  const redis = await startRedis(t)
  const [one, two] = [await serve(t, ['--redis-url', redis], TOKENS_ENV), await serve(t, ['--redis-url', redis], TOKENS_ENV)]
  const alice = await httpClient(one, 'legacy', tokens.alice)
  await isolated(t, alice, await httpClient(two, 'legacy', tokens.alice), [alice.through(two)])
  const modern = await httpClient(one, 'modern', tokens.alice)
  await isolated(t, modern, await httpClient(two, 'modern', tokens.bob), [modern.through(two)])
})

t.test('stateless replicas sharing Redis: a task is its principal\'s; without auth tasks/list is refused (no identity) and the id alone reaches the task', { skip }, async (t) => {
  const redis = await startRedis(t)
  const [open, guarded] = [await serve(t, ['--mode', 'stateless', '--redis-url', redis]), await serve(t, ['--mode', 'stateless', '--redis-url', redis], TOKENS_ENV)]
  const alice = await httpClient(guarded, 'legacy', tokens.alice, true)
  await isolated(t, alice, await httpClient(guarded, 'legacy', tokens.bob, true), [await httpClient(guarded, 'modern', tokens.alice)])

  const anyone = await httpClient(open, 'legacy', undefined, true)
  t.match(messageOf(await anyone.ask('tasks/list', {})), { error: { code: -32600, message: /tasks\/list needs to know whose tasks to list/ } })
  const taskId = await startTask(anyone)
  t.match(messageOf(await (await httpClient(open, 'modern')).ask('tasks/get', { taskId })), { result: { taskId, status: 'working' } }, 'the unguessable id is the only key to it')
  await anyone.ask('tasks/cancel', { taskId })
})
