import t from 'tap'
import { Type } from '@sinclair/typebox'
import { defineTool, inputRequired, textResult, type RunResult } from '../../src/tool-api/define-tool.js'
import { defineResource } from '../../src/tool-api/define-resource.js'
import { META, type Envelope, type RoutingHeaders } from '../../src/mcp/era.js'
import { rejected } from '../../src/mcp/modern/handler.js'
import type { RequestChannel } from '../../src/mcp/wire/channel.js'
import { askForeverTool, byRegionTool, testEngine, testTools } from '../helpers/engine.js'
import { waitUntil } from '../helpers/wait.js'

// The 2026-07-28 era over the engine (transports are in test/modern-transports.test.ts): results,
// errors and their HTTP statuses, logging, cancellation, subscriptions and input rounds.

type Message = Record<string, any>
const NO_ARGS = Type.Object({})

const modernTools = [
  ...testTools,
  defineTool({
    name: 'needs_sampling',
    title: 'Needs Sampling',
    category: 'guide',
    description: 'Runs only for a client that declares sampling.',
    annotations: {},
    input: NO_ARGS,
    clientCapabilities: { sampling: {} },
    run: () => textResult('ran')
  }),
  defineTool<typeof NO_ARGS, RunResult>({
    name: 'ask_name',
    title: 'Ask Name',
    category: 'guide',
    description: 'Asks for a name with state, then greets.',
    annotations: {},
    input: NO_ARGS,
    run: (_args, ctx) => ctx.input === undefined
      ? inputRequired({ who: { method: 'elicitation/create', params: { message: 'Name?', requestedSchema: { type: 'object', properties: {} } } } }, 'round-1')
      : textResult(`hello ${String((ctx.input.responses.who as Message).content?.name)} (${String(ctx.input.state)})`)
  }),
  askForeverTool('roots/list'),
  byRegionTool
]

const resources = [
  defineResource({ uri: 'test://one', name: 'one', read: () => [{ uri: 'test://one', text: 'one' }] }),
  // Reads its signal only after a pause, as a slow reader would.
  // Answers a timer later: the close() a test makes right after asking always comes first.
  defineResource({ uri: 'test://late', name: 'late', read: async (ctx) => { await new Promise(resolve => setImmediate(resolve)); return [{ uri: 'test://late', text: String(ctx.signal.aborted) }] } }),
  defineResource({ uri: 'test://boom', name: 'boom', read: () => { throw new Error('disk on fire') } })
]

function engine (cache?: { listTtlMs?: number, readTtlMs?: number }) {
  return testEngine({ tools: modernTools, resources }, { cache })
}

const env = (extra: Partial<Envelope> = {}): Envelope => ({ protocolVersion: '2026-07-28', clientCapabilities: {}, clientInfo: undefined, logLevel: undefined, ...extra })

/** Sends one modern request through the engine; the answer parsed, its status, and what went to the channel. */
async function ask (server: ReturnType<typeof engine>['server'], method: string, params: Message = {}, options: { envelope?: Envelope, headers?: RoutingHeaders, id?: number } = {}) {
  const related: Message[] = []
  const channel: RequestChannel = { send: (m) => related.push(JSON.parse(m)) }
  const { answer } = server.answerModern({ id: options.id ?? 1, method, params }, options.envelope ?? env(), { headers: options.headers, channel })
  const { message, status } = await answer
  return { body: message === undefined ? undefined : JSON.parse(message) as Message, status, related }
}

t.test('server/discover: versions, capabilities without the removed ones, identity and public cache hints', async (t) => {
  const { server } = engine({ listTtlMs: 1234 })
  const { body, status } = await ask(server, 'server/discover')

  t.equal(status, 200)
  t.strictSame(body!.result, {
    supportedVersions: ['2026-07-28'],
    capabilities: { tools: { listChanged: false }, completions: {}, logging: {}, resources: { listChanged: false } },
    instructions: 'hi',
    resultType: 'complete',
    ttlMs: 1234,
    cacheScope: 'public',
    _meta: { [META.serverInfo]: { name: 'test', version: '0.0.0' } }
  })
})

t.test('every modern result says resultType and who answered; lists are cached publicly, reads privately', async (t) => {
  const { server } = engine()
  const legacyList = JSON.parse(server.registry.toolsListPage(undefined))
  const list = (await ask(server, 'tools/list')).body!.result
  const call = (await ask(server, 'tools/call', { name: 'echo_text', arguments: { text: 'hi' } })).body!.result
  const read = (await ask(server, 'resources/read', { uri: 'test://one' })).body!.result

  t.strictSame(list.tools, legacyList.tools, 'the same tools as the 2025 list')
  t.match(list, { resultType: 'complete', ttlMs: 300000, cacheScope: 'public', _meta: { [META.serverInfo]: { name: 'test' } } })
  t.match(call, { content: [{ type: 'text', text: 'hi' }], resultType: 'complete', _meta: { [META.serverInfo]: { name: 'test' } } })
  t.notOk('ttlMs' in call, 'a tool result is not cacheable')
  t.match(read, { contents: [{ text: 'one' }], ttlMs: 0, cacheScope: 'private', resultType: 'complete' })
  t.match((await ask(server, 'prompts/list')).body!.result, { prompts: [], resultType: 'complete', cacheScope: 'public' })
})

t.test('removed and unknown methods are -32601 with 404; a missing client capability is -32021 with 400', async (t) => {
  const { server } = engine()
  for (const method of ['initialize', 'ping', 'logging/setLevel', 'resources/subscribe', 'resources/unsubscribe']) {
    const { body, status } = await ask(server, method, {}, { id: 7 })
    t.match([status, body], [404, { id: 7, error: { code: -32601, message: /removed in protocol 2026-07-28/ } }], method)
  }
  t.match(await ask(server, 'no/such'), { status: 404, body: { error: { code: -32601, message: 'Method not found: no/such' } } })
  const missing = await ask(server, 'tools/call', { name: 'needs_sampling', arguments: {} })
  t.match(missing, { status: 400, body: { error: { code: -32021, data: { requiredCapabilities: { sampling: {} } } } } })
  t.match(await ask(server, 'tools/call', { name: 'needs_sampling', arguments: {} }, { envelope: env({ clientCapabilities: { sampling: {} } }) }), { status: 200, body: { result: { content: [{ text: 'ran' }] } } })
  // In-band errors keep 200: an unknown tool, a resource that does not exist (with its uri).
  t.match(await ask(server, 'tools/call', { name: 'nope' }), { status: 200, body: { error: { code: -32602 } } })
  t.match(await ask(server, 'tools/call', {}), { status: 200, body: { error: { code: -32602, message: "'name' must be a string" } } })
  // There are no server→client requests in 2026: a tool that tries one gets a tool error saying what to do instead.
  t.match(await ask(server, 'tools/call', { name: 'ask_client', arguments: {} }, { envelope: env({ clientCapabilities: { sampling: {} } }) }), { body: { result: { isError: true, content: [{ text: /^ERROR CLIENT_CAPABILITY_MISSING: 'sampling\/createMessage' cannot be sent: protocol 2026-07-28 has no server→client requests/ }] } } })
  t.match(await ask(server, 'resources/read', { uri: 'test://none' }), { status: 200, body: { error: { code: -32602, data: { uri: 'test://none' } } } })
})

t.test('log notifications only when the request asks for a level, at or above it', async (t) => {
  const { server } = engine()
  const quiet = await ask(server, 'tools/call', { name: 'slow_tool', arguments: { ms: 1 } })
  const info = await ask(server, 'tools/call', { name: 'slow_tool', arguments: { ms: 1 } }, { envelope: env({ logLevel: 1 }) })
  const error = await ask(server, 'tools/call', { name: 'slow_tool', arguments: { ms: 1 } }, { envelope: env({ logLevel: 4 }) })

  t.strictSame(quiet.related, [])
  t.match(info.related, [{ method: 'notifications/message', params: { level: 'info', logger: 'slow_tool' } }])
  t.strictSame(error.related, [])
})

t.test('a modern request whose stream closes is cancelled: the tool sees its signal, nothing is answered', async (t) => {
  const { server } = engine()
  const { answer, close } = server.answerModern({ id: 1, method: 'tools/call', params: { name: 'slow_tool', arguments: { ms: 60_000 } } }, env(), {})
  setTimeout(() => { close(); close() }, 20)
  t.same(await answer, { message: undefined, status: 200 })
  t.same(server.activeCalls(), [])
  // A reader that looks at its signal only after the stream closed still sees it aborted.
  const late = server.answerModern({ id: 2, method: 'resources/read', params: { uri: 'test://late' } }, env(), {})
  late.close()
  t.match(JSON.parse((await late.answer).message!), { result: { contents: [{ text: 'true' }] } })
})

t.test('an unexpected failure is an internal error, logged with its method; the client sees no detail', async (t) => {
  const { server, lines } = engine()
  const { body, status } = await ask(server, 'resources/read', { uri: 'test://boom' })
  t.match([status, body], [200, { error: { code: -32603, message: 'Internal error' } }])
  t.ok(lines.some(l => l.msg === 'request failed' && l.method === 'resources/read'))
})

t.test('routing headers: required ones, Mcp-Name and Mcp-Param-* must agree with the body (Base64 form decoded)', async (t) => {
  const { server } = engine()
  const base = { protocolVersion: '2026-07-28', method: 'tools/call' }
  const call = (headers: RoutingHeaders, args: Message = {}) => ask(server, 'tools/call', { name: 'by_region', arguments: args }, { headers })
  const code = async (p: ReturnType<typeof call>) => { const r = await p; return [r.status, r.body!.error?.code ?? 'ok'] }

  t.same(await code(call({ method: 'tools/call', name: 'by_region' })), [400, -32020], 'no MCP-Protocol-Version')
  t.same(await code(call({ protocolVersion: '2026-07-28', name: 'by_region' })), [400, -32020], 'no Mcp-Method')
  t.same(await code(call(base)), [400, -32020], 'no Mcp-Name for a body that names a tool')
  t.same(await code(call({ ...base, name: 'other' })), [400, -32020], 'a different Mcp-Name')
  t.same(await code(call({ ...base, name: `=?base64?${Buffer.from('by_region').toString('base64')}?=` })), [200, 'ok'], 'Base64 form')
  t.same(await code(call({ ...base, name: '=?base64?!!!?=' })), [400, -32020], 'Base64 that is not canonical')
  t.same(await code(call({ ...base, name: '=?base64?/w==?=' })), [400, -32020], 'Base64 of bytes that are not UTF-8')
  t.same(await code(call({ ...base, name: 'by_region' }, { region: 'eu' })), [400, -32020], 'a header parameter without its header')
  t.same(await code(call({ ...base, name: 'by_region', params: { region: 'us' } }, { region: 'eu' })), [400, -32020])
  t.same(await code(call({ ...base, name: 'by_region', params: { region: '=?base64?ZXU=?=', count: '3' } }, { region: 'eu', count: 3 })), [200, 'ok'])
  t.same(await code(call({ ...base, name: 'by_region', params: { region: 'eu', count: '3.0' } }, { region: 'eu', count: 3 })), [200, 'ok'], 'numbers compare as numbers')
  t.same(await code(call({ ...base, name: 'by_region', params: { region: '=?base64?ZXU?=' } }, { region: 'eu' })), [400, -32020], 'bad padding')
  t.same(await code(call({ ...base, name: 'by_region', params: { 'dry-run': 'true' } }, { dry: true })), [200, 'ok'], 'a boolean as its text')
  t.same(await code(call({ ...base, name: 'by_region', params: { 'dry-run': 'false' } }, { dry: true })), [400, -32020])
  t.same(await code(call({ ...base, name: 'by_region' }, { region: { nested: 1 } })), [200, 'ok'], 'a non-primitive is left to argument validation')
  t.same(await code(ask(server, 'tools/call', { name: 'by_region' }, { headers: { ...base, name: 'by_region' } })), [200, 'ok'], 'no arguments, no parameter headers')
  t.same(await code(ask(server, 'tools/list', {}, { headers: { protocolVersion: '2026-07-28', method: 'tools/list' } })), [200, 'ok'])
})

t.test('subscriptions/listen: acknowledged with its id, held open, and ended with a result by a shutdown', async (t) => {
  const { server } = engine()
  const related: Message[] = []
  const { answer } = server.answerModern({ id: 'sub-1', method: 'subscriptions/listen', params: { notifications: { toolsListChanged: true } } }, env(), { channel: { send: m => related.push(JSON.parse(m)) } })
  await waitUntil(() => related.length > 0, 'the acknowledgement')
  t.match(related, [{ method: 'notifications/subscriptions/acknowledged', params: { notifications: {}, _meta: { [META.subscriptionId]: 'sub-1' } } }])
  server.endSubscriptions()
  t.match(JSON.parse((await answer).message!), { id: 'sub-1', result: { resultType: 'complete', _meta: { [META.subscriptionId]: 'sub-1' } } })

  const closed = server.answerModern({ id: 2, method: 'subscriptions/listen', params: { notifications: {} } }, env(), {})
  closed.close()
  t.equal((await closed.answer).message, undefined, 'a closed stream gets nothing')
  t.match(await ask(server, 'subscriptions/listen', { notifications: [] }), { body: { error: { code: -32602 } } })
})

t.test('input rounds: the question goes to the client with sealed state; only that state, for that tool, is accepted', async (t) => {
  const { server } = engine()
  const first = (await ask(server, 'tools/call', { name: 'ask_name', arguments: {} })).body!.result
  t.match(first, { resultType: 'input_required', inputRequests: { who: { method: 'elicitation/create' } } })
  t.not(first.requestState, 'round-1', 'the state is sealed, not sent as the tool wrote it')

  const answered = { who: { action: 'accept', content: { name: 'Ada' } } }
  const done = (await ask(server, 'tools/call', { name: 'ask_name', arguments: {}, inputResponses: answered, requestState: first.requestState })).body!.result
  t.match(done, { resultType: 'complete', content: [{ text: 'hello Ada (round-1)' }] })

  const tampered = `${Buffer.from('round-9').toString('base64url')}.${String(first.requestState).split('.')[1]}`
  for (const [label, state] of [['tampered', tampered], ['no signature', 'round-1'], ['not a string', 42]] as Array<[string, unknown]>) {
    t.match(await ask(server, 'tools/call', { name: 'ask_name', arguments: {}, inputResponses: answered, requestState: state }), { body: { error: { code: -32602, message: /integrity check/ } } }, label)
  }
  t.match(await ask(server, 'tools/call', { name: 'ask_forever', arguments: {}, inputResponses: {}, requestState: first.requestState }), { body: { error: { code: -32602 } } }, 'state of another tool')
  // The state binds to what the request names: a resource's uri, or nothing for a call that names no tool.
  t.match(await ask(server, 'resources/read', { uri: 'test://one', inputResponses: {}, requestState: first.requestState }), { body: { error: { code: -32602, message: /integrity check/ } } })
  t.match(await ask(server, 'tools/call', { inputResponses: {} }), { body: { error: { code: -32602, message: "'name' must be a string" } } })
  for (const responses of [null, { who: 12345 }, 'x']) {
    t.match(await ask(server, 'tools/call', { name: 'ask_name', arguments: {}, inputResponses: responses }), { body: { error: { code: -32602, message: /inputResponses/ } } })
  }
})

t.test('a refusal travels with its own HTTP status; one without (a bug, not a client mistake) is a 500 internal error', async (t) => {
  const bug = rejected(7, new Error('boom'))
  t.equal(bug.status, 500)
  t.match(JSON.parse(bug.message ?? ''), { id: 7, error: { code: -32603 } })
})
