import t from 'tap'
import { Type } from '@sinclair/typebox'
import { defineTool, inputRequired, textResult, type RunResult } from '../../src/tool-api/define-tool.js'
import { definePrompt } from '../../src/tool-api/define-prompt.js'
import { META } from '../../src/mcp/era.js'
import { askForeverTool, initializedSession, testEngine, testTools } from '../helpers/engine.js'
import { waitUntil } from '../helpers/wait.js'

// A stream connection (stdio) speaks the era its client picks first; and one tool definition that
// asks for input serves both: a 2025 session gets the questions as server→client requests.

type Message = Record<string, any>
const NO_ARGS = Type.Object({})
const envelope = { [META.protocolVersion]: '2026-07-28', [META.clientCapabilities]: {} }
const rpc = (id: number | string, method: string, params: Message = {}) => ({ jsonrpc: '2.0', id, method, params })

const askingTools = [
  ...testTools,
  defineTool<typeof NO_ARGS, RunResult>({
    name: 'ask_twice',
    title: 'Ask Twice',
    category: 'guide',
    description: 'Asks for a name, then a colour, then answers.',
    annotations: {},
    input: NO_ARGS,
    run (_args, ctx) {
      // Each round answers only the previous round's questions; what came before travels in the state.
      const { responses, state } = ctx.input ?? { responses: {} as Message, state: undefined }
      if (state === 'one' && responses.name !== undefined) return inputRequired({ colour: { method: 'sampling/createMessage', params: { messages: [], maxTokens: 5 } } }, `two:${String((responses.name as Message).content?.name)}`)
      if (state?.startsWith('two:') === true && responses.colour !== undefined) return textResult(`${state} likes ${String((responses.colour as Message).content?.text)}`)
      return inputRequired({ name: { method: 'elicitation/create', params: { message: 'Name?' } } }, 'one')
    }
  }),
  askForeverTool('elicitation/create', { message: 'Again?' })
]
const endlessPrompt = definePrompt({
  name: 'asks_forever',
  get: () => inputRequired({ ctx: { method: 'elicitation/create', params: { message: 'More?' } } })
})
const askingPrompt = definePrompt({
  name: 'asks_context',
  get: (_args, ctx) => ctx.input === undefined
    ? inputRequired({ ctx: { method: 'elicitation/create', params: { message: 'Context?' } } })
    : { messages: [{ role: 'user', content: { type: 'text', text: String((ctx.input.responses.ctx as Message).content?.context) } }] }
})

function connection () {
  const sent: Message[] = []
  const { server } = testEngine({ tools: askingTools, prompts: [askingPrompt] }, { toolTimeoutMs: 2000 })
  const conn = server.openConnection({ send: (m) => sent.push(JSON.parse(m)) })
  const call = async (message: unknown) => {
    const raw = await conn.handle(message)
    return raw === undefined ? undefined : JSON.parse(raw) as Message
  }
  return { conn, call, sent }
}

t.test('a server/discover probe before initialize pins the connection to 2026-07-28', async (t) => {
  const { call } = connection()
  t.match(await call(rpc(1, 'server/discover', { _meta: envelope })), { result: { supportedVersions: ['2026-07-28'], resultType: 'complete' } })
  t.match(await call(rpc(2, 'initialize', { protocolVersion: '2025-11-25', capabilities: {} })), { error: { code: -32601, message: /speaks protocol 2026-07-28/ } })
  t.match(await call(rpc(3, 'tools/list')), { error: { code: -32602, message: /params._meta must carry/ } })
  t.match(await call(rpc(4, 'tools/list', { _meta: envelope })), { result: { resultType: 'complete', tools: [{ name: 'echo_text' }] } })
  t.match(await call(rpc(5, 'tools/list', { _meta: { ...envelope, [META.protocolVersion]: '2030-01-01' } })), { error: { code: -32022 } })
  t.equal(await call({ jsonrpc: '2.0', id: 6, result: {} }), undefined, 'a response has no place in 2026')
  t.match(await call({ jsonrpc: '2.0', id: 7 }), { error: { code: -32600 } })
  t.match(await call(rpc(8, 'tools/call', { name: 'echo_text', arguments: {}, requestState: 'forged', _meta: envelope })), { error: { code: -32602, message: /inputResponses/ } }, 'a refused retry is an error in-band')
  t.match(await call(rpc(10, 'ping', { _meta: envelope })), { error: { code: -32601, message: /removed in protocol 2026-07-28/ } }, 'a removed method, refused before any handler')
  t.match(await call(rpc(9, 'resources/read', { uri: 'nope://x', _meta: envelope })), { error: { code: -32602, data: { uri: 'nope://x' } } }, 'a handler that rejects')
})

t.test('initialize first pins 2025: an enveloped request is then just an unknown 2025 method', async (t) => {
  const { call } = connection()
  t.match(await call(rpc(1, 'ping')), { result: {} }, 'ping before anything pins nothing')
  t.match(await call(rpc(2, 'tools/list', { _meta: { [META.protocolVersion]: 'x' } })), { error: { code: -32602 } }, 'a broken envelope is refused, pinning nothing')
  t.match(await call(rpc(3, 'initialize', { protocolVersion: '2025-11-25', capabilities: {} })), { result: { protocolVersion: '2025-11-25' } })
  t.match(await call(rpc(4, 'server/discover', { _meta: envelope })), { error: { code: -32601 } })
  t.match(await call(rpc(5, 'tools/list', { _meta: envelope })), { result: { tools: [{ name: 'echo_text' }] } })
})

t.test('2026 on a stream: notifications/cancelled and a closing connection cancel running calls', async (t) => {
  const { conn, call } = connection()
  const running = call(rpc('a', 'tools/call', { name: 'slow_tool', arguments: { ms: 60_000 }, _meta: envelope }))
  await waitUntil(() => conn.inflightCount === 1, 'the call to run')
  t.equal(conn.inflightCount, 1)
  await call({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'a' } })
  await call({ jsonrpc: '2.0', method: 'notifications/progress', params: {} })
  t.equal(await running, undefined)

  const second = call(rpc('b', 'tools/call', { name: 'slow_tool', arguments: { ms: 60_000 }, _meta: envelope }))
  const listening = call(rpc('c', 'subscriptions/listen', { notifications: {}, _meta: envelope }))
  await waitUntil(() => conn.inflightCount === 1, 'the second call to run')
  conn.close()
  t.equal(await second, undefined)
  t.equal(await listening, undefined, 'a subscription on a closed connection ends without an answer')
  t.equal(conn.inflightCount, 0)
})

t.test('2025: a tool\'s input rounds become server→client requests, and the tool runs again with the answers', async (t) => {
  const { session, sent } = await initializedSession(testEngine({ tools: askingTools }), { elicitation: {}, sampling: {} })
  const answering = setInterval(() => {
    for (const request of sent.splice(0).filter(m => m.id !== undefined && m.method !== undefined)) {
      const result = request.method === 'elicitation/create' ? { action: 'accept', content: { name: 'Ada' } } : { role: 'assistant', content: { type: 'text', text: 'blue' }, model: 'm' }
      session.handle({ jsonrpc: '2.0', id: request.id, result }).catch(() => {})
    }
  }, 2)
  t.teardown(() => clearInterval(answering))

  const done = JSON.parse((await session.handle(rpc(10, 'tools/call', { name: 'ask_twice', arguments: {} })))!)
  t.same(done.result, { content: [{ type: 'text', text: 'two:Ada likes blue' }] })
})

t.test('2025: a client without the capability gets a tool error; a tool that never stops asking is given up', async (t) => {
  const bare = await initializedSession(testEngine({ tools: askingTools }))
  t.match((await bare.call('tools/call', { name: 'ask_twice', arguments: {} })).result, { isError: true, content: [{ text: /^ERROR CLIENT_CAPABILITY_MISSING/ }] })

  const { session, sent } = await initializedSession(testEngine({ tools: askingTools, prompts: [askingPrompt, endlessPrompt] }), { elicitation: {} })
  const answering = setInterval(() => {
    for (const request of sent.splice(0).filter(m => m.id !== undefined && m.method !== undefined)) session.handle({ jsonrpc: '2.0', id: request.id, result: { action: 'accept', content: { context: 'ctx!' } } }).catch(() => {})
  }, 2)
  t.teardown(() => clearInterval(answering))
  const forever = JSON.parse((await session.handle(rpc(11, 'tools/call', { name: 'ask_forever', arguments: {} })))!)
  t.match(forever.result, { isError: true, content: [{ text: /^ERROR INPUT_ROUNDS_EXCEEDED: ask_forever still asked for input after 8 rounds/ }] })
  // A prompt asks the same way.
  const prompt = JSON.parse((await session.handle(rpc(12, 'prompts/get', { name: 'asks_context' })))!)
  t.match(prompt.result, { messages: [{ content: { text: 'ctx!' } }] })
  const endless = JSON.parse((await session.handle(rpc(13, 'prompts/get', { name: 'asks_forever' })))!)
  t.match(endless.error, { code: -32600, message: 'still asked for input after 8 rounds' })
})

t.test('2025: a client that never answers is bounded by the call deadline', async (t) => {
  const { call } = await initializedSession(testEngine({ tools: askingTools }, { toolTimeoutMs: 100 }), { elicitation: {} })
  // The deadline sweep is unref'd (a server's sockets keep it going): this timer stands in for them.
  const alive = setTimeout(() => {}, 10_000)
  t.teardown(() => clearTimeout(alive))
  const res = await call('tools/call', { name: 'ask_twice', arguments: {} })
  t.match(res.result.content[0].text, /^ERROR TIMEOUT: ask_twice did not finish within 100 ms/)
})
