import t from 'tap'
import { modernPrompts, modernTools } from '../fixtures/conformance/conformance-modern.js'
import type { Envelope } from '../../src/mcp/era.js'
import { initializedSession, testEngine } from '../helpers/engine.js'

// The 2026-07-28 fixtures over the engine: each round's questions, what a finished call says, and
// the answers a real client may give that the suite does not (declined, empty, missing).

type Message = Record<string, any>

const engine = () => testEngine({ tools: modernTools(), prompts: modernPrompts() })
const envelope = (clientCapabilities: Message = {}): Envelope => ({ protocolVersion: '2026-07-28', clientCapabilities, clientInfo: undefined, logLevel: undefined })

async function modern (server: ReturnType<typeof engine>['server'], method: string, params: Message, capabilities: Message = {}): Promise<Message> {
  const { message } = await server.answerModern({ id: 1, method, params }, envelope(capabilities), {}).answer
  return JSON.parse(message!)
}

/** Calls a tool, answers each round with `answer(key, request)`, and returns the final result. */
async function rounds (server: ReturnType<typeof engine>['server'], name: string, answer: (key: string, request: Message) => Message, capabilities: Message = {}): Promise<Message> {
  let params: Message = { name, arguments: {} }
  for (let round = 0; round < 5; round++) {
    const { result, error } = await modern(server, 'tools/call', params, capabilities)
    if (error !== undefined) return error
    if (result.resultType !== 'input_required') return result
    const inputResponses = Object.fromEntries(Object.entries(result.inputRequests as Record<string, Message>).map(([key, request]) => [key, answer(key, request)]))
    params = { name, arguments: {}, inputResponses, ...(result.requestState === undefined ? {} : { requestState: result.requestState }) }
  }
  throw new Error('too many rounds')
}

const text = (result: Message): string => result.content[0].text

t.test('each asking tool: its questions, then an answer built from the responses', async (t) => {
  const { server } = engine()
  const accept = (content: Message) => () => ({ action: 'accept', content })
  t.equal(text(await rounds(server, 'test_input_required_result_elicitation', accept({ name: 'Alice' }))), 'Hello, Alice!')
  t.equal(text(await rounds(server, 'test_input_required_result_elicitation', () => ({ action: 'decline' }))), 'Hello, undefined!', 'a declined answer has no content')
  t.equal(text(await rounds(server, 'test_input_required_result_sampling', () => ({ role: 'assistant', content: { type: 'text', text: 'Paris' } }))), 'The model answered: Paris')
  t.equal(text(await rounds(server, 'test_input_required_result_sampling', () => ({}))), 'The model answered: ', 'a sampling answer without text')
  t.equal(text(await rounds(server, 'test_input_required_result_list_roots', () => ({ roots: [{ uri: 'file:///r' }] }))), 'Client roots: [{"uri":"file:///r"}]')
  t.equal(text(await rounds(server, 'test_input_required_result_list_roots', () => ({}))), 'Client roots: []')
  t.equal(text(await rounds(server, 'test_input_required_result_request_state', accept({ ok: true }))), 'state-ok: confirmed')
  const all = (key: string) => key === 'greeting' ? { content: { text: 'Hi' } } : key === 'client_roots' ? {} : { action: 'accept', content: { name: 'Bo' } }
  t.equal(text(await rounds(server, 'test_input_required_result_multiple_inputs', all)), 'Hi Bo ([])')
  t.equal(text(await rounds(server, 'test_input_required_result_multiple_inputs', (key) => key === 'client_roots' ? { roots: ['r'] } : all(key))), 'Hi Bo (["r"])')
  t.equal(text(await rounds(server, 'test_input_required_result_multi_round', (key) => ({ action: 'accept', content: key === 'step1' ? { name: 'Cy' } : { color: 'red' } }))), 'Cy likes red')
  t.equal(text(await rounds(server, 'test_input_required_result_tampered_state', accept({ ok: true }))), 'state accepted')
  t.equal(text(await rounds(server, 'test_streaming_elicitation', accept({ name: 'Di' }))), 'Hello, Di!')
})

t.test('a retry that drops the state or misses a key is asked again, not answered', async (t) => {
  const { server } = engine()
  const again = await modern(server, 'tools/call', { name: 'test_input_required_result_request_state', arguments: {}, inputResponses: { confirm: { action: 'accept', content: { ok: true } } } })
  t.match(again.result, { resultType: 'input_required', inputRequests: { confirm: {} } })
  const wrongKey = await modern(server, 'tools/call', { name: 'test_input_required_result_elicitation', arguments: {}, inputResponses: { other: { action: 'accept' } } })
  t.match(wrongKey.result, { resultType: 'input_required', inputRequests: { user_name: {} } })
  const round2 = await modern(server, 'tools/call', { name: 'test_input_required_result_multi_round', arguments: {}, inputResponses: {} })
  t.match(round2.result, { inputRequests: { step1: {} } }, 'a multi-round retry without state starts over')
})

t.test('the capabilities tool asks only through what the request declared', async (t) => {
  const { server } = engine()
  const none = await modern(server, 'tools/call', { name: 'test_input_required_result_capabilities', arguments: {} })
  t.equal(text(none.result), 'the client declared no capability to ask through')
  const all = await modern(server, 'tools/call', { name: 'test_input_required_result_capabilities', arguments: {} }, { sampling: {}, elicitation: {}, roots: {} })
  t.same(Object.keys(all.result.inputRequests), ['sampled', 'elicited', 'roots'])
  const done = await modern(server, 'tools/call', { name: 'test_input_required_result_capabilities', arguments: {}, inputResponses: { sampled: {} } }, { sampling: {} })
  t.equal(text(done.result), 'answered: sampled')
})

t.test('the prompt asks for context, then renders it; the header and logging tools answer plainly', async (t) => {
  const { server } = engine()
  const first = await modern(server, 'prompts/get', { name: 'test_input_required_result_prompt' })
  t.match(first.result, { resultType: 'input_required', inputRequests: { user_context: { method: 'elicitation/create' } } })
  const second = await modern(server, 'prompts/get', { name: 'test_input_required_result_prompt', inputResponses: { user_context: { action: 'accept', content: { context: 'docs' } } } })
  t.match(second.result, { resultType: 'complete', messages: [{ content: { text: 'Use this context: docs' } }] })
  t.equal(text((await modern(server, 'tools/call', { name: 'test_custom_header', arguments: { region: 'eu' } })).result), 'region: eu')
  t.equal(text((await modern(server, 'tools/call', { name: 'test_logging_tool', arguments: {} })).result), 'logged twice')
  t.equal(text((await modern(server, 'tools/call', { name: 'test_missing_capability', arguments: {} }, { sampling: {} })).result), 'the client declared sampling')
})

t.test('in a 2025 session the same tools ask with server→client requests', async (t) => {
  const { session, sent } = await initializedSession(engine(), { elicitation: {} })
  const answering = setInterval(() => {
    for (const request of sent.splice(0).filter(m => m.id !== undefined && m.method === 'elicitation/create')) {
      session.handle({ jsonrpc: '2.0', id: request.id, result: { action: 'accept', content: { name: 'Ed' } } }).catch(() => {})
    }
  }, 2)
  t.teardown(() => clearInterval(answering))
  const done = JSON.parse((await session.handle({ jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'test_input_required_result_elicitation', arguments: {} } }))!)
  t.same(done.result.content, [{ type: 'text', text: 'Hello, Ed!' }])
})
