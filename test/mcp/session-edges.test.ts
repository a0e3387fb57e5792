import t from 'tap'
import { Type } from '@sinclair/typebox'
import { defineTool, textResult } from '../../src/tool-api/define-tool.js'
import { initializedSession, testEngine, testTools } from '../helpers/engine.js'
import { waitUntil } from '../helpers/wait.js'

// The session's edges: malformed and duplicate tools/call requests, a closed session, and
// server→client requests that cannot be sent, are sent too late, or outlive their call.

const rpc = (id: number | string, method: string, params?: Record<string, unknown>) => ({ jsonrpc: '2.0', id, method, params })
const parse = (raw: string | undefined): Record<string, any> => JSON.parse(raw!)

let orphan: Promise<Record<string, unknown>> | undefined
let late: Promise<Record<string, unknown>> | undefined

const edgeTools = [
  ...testTools,
  defineTool({
    name: 'request_method',
    title: 'Request',
    category: 'guide',
    description: 'Sends the given method to the client and returns its answer.',
    annotations: {},
    input: Type.Object({ method: Type.String({ description: 'Method, e.g. "roots/list"' }) }),
    async run ({ method }, ctx) {
      return textResult(JSON.stringify(await ctx.client.request(method, {})))
    }
  }),
  defineTool({
    name: 'fire_and_forget',
    title: 'Fire',
    category: 'guide',
    description: 'Sends sampling/createMessage and returns without waiting for the answer.',
    annotations: {},
    input: Type.Object({}),
    run (_args, ctx) {
      orphan = ctx.client.request('sampling/createMessage', { messages: [], maxTokens: 1 })
      orphan.catch(() => {})
      return textResult('sent')
    }
  }),
  defineTool({
    name: 'request_after_abort',
    title: 'Late',
    category: 'guide',
    description: 'Waits for its deadline, then sends sampling/createMessage anyway.',
    annotations: {},
    input: Type.Object({}),
    async run (_args, ctx) {
      await new Promise(resolve => ctx.signal.addEventListener('abort', resolve, { once: true }))
      late = ctx.client.request('sampling/createMessage', { messages: [], maxTokens: 1 })
      late.catch(() => {})
      return textResult('too late')
    }
  })
]

t.test('tools/call with a name that is not a string is -32602, naming the field', async (t) => {
  const { session } = await initializedSession(testEngine({ tools: edgeTools }))

  const res = parse(await session.handle(rpc(2, 'tools/call', { name: 7, arguments: {} })))

  t.match(res, { id: 2, error: { code: -32602, message: /'name' must be a string/ } })
})

t.test('a request id already in flight is -32600; the running call is not disturbed', async (t) => {
  const { session } = await initializedSession(testEngine({ tools: edgeTools }))

  const first = session.handle(rpc('dup', 'tools/call', { name: 'slow_tool', arguments: { ms: 50 } }))
  const second = parse(await session.handle(rpc('dup', 'tools/call', { name: 'echo_text', arguments: { text: 'x' } })))

  t.match(second, { id: 'dup', error: { code: -32600, message: /request id "dup" is already in use/ } })
  t.match(parse(await first), { id: 'dup', result: { content: [{ text: 'finished' }] } })
})

t.test('a tools/call that reaches a closed session is cancelled at once: no response, the tool sees an aborted signal', async (t) => {
  let aborted: boolean | undefined
  const probe = defineTool({
    name: 'probe_signal',
    title: 'Probe',
    category: 'guide',
    description: 'Reports whether its signal is aborted when it starts.',
    annotations: {},
    input: Type.Object({}),
    run (_args, ctx) {
      aborted = ctx.signal.aborted
      return textResult('ran')
    }
  })
  const { session } = await initializedSession(testEngine({ tools: [probe] }))

  session.close()
  const res = await session.handle(rpc(3, 'tools/call', { name: 'probe_signal', arguments: {} }))

  t.equal(res, undefined, 'a cancelled request has no response')
  t.equal(aborted, true)
})

t.test('roots/list needs the roots capability; a method outside sampling/elicitation/roots needs none', async (t) => {
  const without = await initializedSession(testEngine({ tools: edgeTools }), {})
  const roots = parse(await without.session.handle(rpc(2, 'tools/call', { name: 'request_method', arguments: { method: 'roots/list' } })))
  t.match(roots.result, { isError: true, content: [{ text: /CLIENT_CAPABILITY_MISSING: the client did not declare the 'roots' capability, so 'roots\/list' cannot be sent/ }] })
  t.notOk(without.sent.some(m => m.method === 'roots/list'), 'nothing was sent')

  const pending = without.session.handle(rpc(3, 'tools/call', { name: 'request_method', arguments: { method: 'ping' } }))
  await new Promise(resolve => setImmediate(resolve))
  const ping = without.sent.find(m => m.method === 'ping')!
  t.ok(ping, 'ping is sent without a capability')
  await without.session.handle({ jsonrpc: '2.0', id: ping.id as number, result: {} })
  t.match(parse(await pending).result, { content: [{ text: '{}' }] })
})

t.test('a request sent after the call was aborted is refused locally: nothing is sent, nothing is cancelled', async (t) => {
  const { session, sent } = await initializedSession(testEngine({ tools: edgeTools }, { toolTimeoutMs: 30 }), { sampling: {} })
  // The deadline sweep is unref'd, and nothing else would keep this process alive while the tool waits.
  const alive = setInterval(() => {}, 1000)
  t.teardown(() => clearInterval(alive))

  const res = parse(await session.handle(rpc(2, 'tools/call', { name: 'request_after_abort', arguments: {} })))
  await waitUntil(() => late !== undefined, 'the tool\'s request after the abort')

  t.match(res.result, { isError: true, content: [{ text: /TIMEOUT/ }] })
  await t.rejects(late!, /deadline passed/)
  t.same(sent.filter(m => m.method !== 'notifications/message'), [], 'neither the request nor a cancellation went out')
})

t.test('closing the session rejects a request its finished call left unanswered', async (t) => {
  const { session, sent } = await initializedSession(testEngine({ tools: edgeTools }), { sampling: {} })

  const res = parse(await session.handle(rpc(2, 'tools/call', { name: 'fire_and_forget', arguments: {} })))
  t.match(res.result, { content: [{ text: 'sent' }] })
  t.ok(sent.some(m => m.method === 'sampling/createMessage'))

  session.close()

  await t.rejects(orphan!, /session closed/)
})

t.test('a client error without a message is still reported as the client\'s error', async (t) => {
  const { session, sent } = await initializedSession(testEngine({ tools: edgeTools }), { sampling: {} })

  const call = session.handle(rpc(2, 'tools/call', { name: 'request_method', arguments: { method: 'sampling/createMessage' } }))
  await new Promise(resolve => setImmediate(resolve))
  const request = sent.find(m => m.method === 'sampling/createMessage')!
  await session.handle({ jsonrpc: '2.0', id: request.id as number, error: { code: -32603 } })

  t.match(parse(await call).result, { isError: true, content: [{ text: /^ERROR CLIENT_REQUEST_FAILED: the client answered with an error: error/ }] })
})
