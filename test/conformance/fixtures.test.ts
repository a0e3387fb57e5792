import t from 'tap'
import { conformanceFixtures } from '../fixtures/conformance/conformance.js'
import { TEST_IMAGE_BASE64 } from '../fixtures/conformance/conformance-tools.js'
import { initializedSession, testEngine } from '../helpers/engine.js'
import { waitUntil } from '../helpers/wait.js'

// The fixtures over the engine itself (no HTTP): exact contents the official suite checks, the
// notifications and server→client requests they send, and the published schemas.

type Message = Record<string, any>

function fixtureEngine () {
  const { tools, resources, resourceTemplates, prompts } = conformanceFixtures()
  return testEngine({ tools, resources, resourceTemplates, prompts })
}

/** An initialized session over the fixtures; `sent` holds what the server sent outside responses. */
async function fixtureSession (capabilities: Message = {}) {
  const s = await initializedSession(fixtureEngine(), capabilities)
  return { ...s, sent: s.sent as Message[] }
}

/** Waits until `sent` holds a message matching `pred`. */
async function waitFor (sent: Message[], pred: (m: Message) => boolean): Promise<Message> {
  await waitUntil(() => sent.some(pred), 'the message to be sent')
  return sent.find(pred) as Message
}

t.test('every fixture registers through the ordinary registry; the 2020-12 tool publishes its schema as written', async (t) => {
  const { registry } = fixtureEngine()
  const names = registry.tools.map(tool => tool.wire.name)
  t.same(names, [
    'test_simple_text', 'test_image_content', 'test_audio_content', 'test_embedded_resource', 'test_multiple_content_types',
    'test_tool_with_logging', 'test_tool_with_progress', 'test_error_handling', 'test_reconnection', 'test_sampling',
    'test_elicitation', 'test_elicitation_sep1034_defaults', 'test_elicitation_sep1330_enums', 'json_schema_2020_12_tool',
    'test_input_required_result_elicitation', 'test_input_required_result_sampling', 'test_input_required_result_list_roots',
    'test_input_required_result_request_state', 'test_input_required_result_multiple_inputs', 'test_input_required_result_multi_round',
    'test_input_required_result_tampered_state', 'test_input_required_result_capabilities', 'test_streaming_elicitation',
    'test_missing_capability', 'test_logging_tool', 'test_custom_header',
    'greet', 'slow_compute', 'failing_job', 'protocol_error_job', 'confirm_delete', 'multi_input', 'test_tool_with_task'
  ])
  // SEP-1613 / SEP-2106: the dialect, the definitions (with an $anchor), the $ref and the composition keywords survive.
  const schema = registry.tool('json_schema_2020_12_tool')!.wire.inputSchema as Message
  t.equal(schema.$schema, 'https://json-schema.org/draft/2020-12/schema')
  t.equal(schema.$defs.address.$anchor, 'addressDef')
  t.same(schema.properties.address, { $ref: '#/$defs/address' })
  t.same(Object.keys(schema).filter(k => ['allOf', 'if', 'then', 'else'].includes(k)), ['allOf', 'if', 'then', 'else'])
  t.equal(schema.additionalProperties, false)
  t.equal((registry.tool('test_custom_header')!.wire.inputSchema as Message).properties.region['x-mcp-header'], 'Region')
})

t.test('content tools return the reference texts, image, audio and embedded resources', async (t) => {
  const { call } = await fixtureSession()
  const result = async (name: string, args: Message = {}): Promise<Message> => (await call('tools/call', { name, arguments: args })).result
  t.same((await result('test_simple_text')).content, [{ type: 'text', text: 'This is a simple text response for testing.' }])
  t.same((await result('test_image_content')).content, [{ type: 'image', data: TEST_IMAGE_BASE64, mimeType: 'image/png' }])
  t.equal((await result('test_audio_content')).content[0].mimeType, 'audio/wav')
  t.same((await result('test_embedded_resource')).content[0].resource, { uri: 'test://embedded-resource', mimeType: 'text/plain', text: 'This is an embedded resource content.' })
  t.same((await result('test_multiple_content_types')).content.map((c: Message) => c.type), ['text', 'image', 'resource'])
  const error = await result('test_error_handling')
  t.equal(error.isError, true)
  t.equal(error.content[0].text, 'This tool intentionally returns an error for testing')
  t.match((await result('json_schema_2020_12_tool', { name: 'Ada', email: 'ada@example.org', address: { city: 'Paris' } })).content[0].text, '"city":"Paris"')
  // Every 2020-12 keyword is enforced, not only the properties: allOf, if/then/else, $ref, additionalProperties.
  t.match((await result('json_schema_2020_12_tool', { name: 'Ada' })).content[0].text, /^ERROR INVALID_ARGUMENT: arguments: must have required property 'phone'/)
  t.match((await result('json_schema_2020_12_tool', { contactMethod: 'phone', email: 'a@b.c' })).content[0].text, /^ERROR INVALID_ARGUMENT: arguments: must have required property 'phone'/)
  t.match((await result('json_schema_2020_12_tool', { email: 'a@b.c', address: { city: 7 } })).content[0].text, /^ERROR INVALID_ARGUMENT: address\.city: must be string/)
  t.match((await result('json_schema_2020_12_tool', { email: 'a@b.c', extra: 1 })).content[0].text, /^ERROR INVALID_ARGUMENT: arguments: must NOT have additional properties/)
})

t.test('progress: three increasing notifications for the client\'s token', async (t) => {
  const { call, sent } = await fixtureSession()
  const res = await call('tools/call', { name: 'test_tool_with_progress', arguments: {}, _meta: { progressToken: 'p-1' } })
  t.notOk(res.result.isError)
  const progress = sent.filter(m => m.method === 'notifications/progress').map(m => m.params)
  t.same(progress.map(p => [p.progressToken, p.progress, p.total]), [['p-1', 0, 100], ['p-1', 50, 100], ['p-1', 100, 100]])
})

t.test('logging: three info messages, filtered by logging/setLevel', async (t) => {
  const { call, sent } = await fixtureSession()
  await call('logging/setLevel', { level: 'debug' })
  await call('tools/call', { name: 'test_tool_with_logging', arguments: {} })
  t.same(sent.filter(m => m.method === 'notifications/message').map(m => [m.params.level, m.params.data]), [
    ['info', 'Tool execution started'], ['info', 'Tool processing data'], ['info', 'Tool execution completed']
  ])
  sent.length = 0
  await call('logging/setLevel', { level: 'error' })
  await call('tools/call', { name: 'test_tool_with_logging', arguments: {} })
  t.equal(sent.filter(m => m.method === 'notifications/message').length, 0)
})

t.test('sampling: sends sampling/createMessage and returns the model\'s text', async (t) => {
  const { session, call, sent } = await fixtureSession({ sampling: {} })
  const pending = call('tools/call', { name: 'test_sampling', arguments: { prompt: 'Say hi' } })
  const request = await waitFor(sent, m => m.method === 'sampling/createMessage')
  t.same(request.params, { messages: [{ role: 'user', content: { type: 'text', text: 'Say hi' } }], maxTokens: 100 })
  await session.handle({ jsonrpc: '2.0', id: request.id, result: { role: 'assistant', content: { type: 'text', text: 'hi' }, model: 'm', stopReason: 'endTurn' } })
  t.equal((await pending).result.content[0].text, 'LLM response: hi')
})

t.test('sampling: the text is found in an array of blocks (2025-11-25), and a reply without text says so', async (t) => {
  const image = { type: 'image', data: TEST_IMAGE_BASE64, mimeType: 'image/png' }
  for (const [content, expected] of [
    [[image, { type: 'text', text: 'after the picture' }], 'LLM response: after the picture'],
    [[image], 'LLM response: No response'],
    [image, 'LLM response: No response']
  ] as const) {
    const { session, call, sent } = await fixtureSession({ sampling: {} })
    const pending = call('tools/call', { name: 'test_sampling', arguments: { prompt: 'Draw' } })
    const request = await waitFor(sent, m => m.method === 'sampling/createMessage')
    await session.handle({ jsonrpc: '2.0', id: request.id, result: { role: 'assistant', content, model: 'm', stopReason: 'endTurn' } })
    t.equal((await pending).result.content[0].text, expected, JSON.stringify(content).slice(0, 60))
  }
})

t.test('sampling without the client capability is a tool error', async (t) => {
  const { call } = await fixtureSession()
  const res = await call('tools/call', { name: 'test_sampling', arguments: { prompt: 'x' } })
  t.equal(res.result.isError, true)
  t.match(res.result.content[0].text, /^ERROR CLIENT_CAPABILITY_MISSING/)
})

t.test('elicitation: the requested schemas carry SEP-1034 defaults and SEP-1330 enum shapes', async (t) => {
  const { session, call, sent } = await fixtureSession({ elicitation: {} })
  const answer = async (tool: string, args: Message, content: Message): Promise<{ request: Message, text: string }> => {
    sent.length = 0
    const pending = call('tools/call', { name: tool, arguments: args })
    const request = await waitFor(sent, m => m.method === 'elicitation/create')
    await session.handle({ jsonrpc: '2.0', id: request.id, result: { action: 'accept', content } })
    return { request, text: (await pending).result.content[0].text }
  }
  const basic = await answer('test_elicitation', { message: 'Who?' }, { username: 'u', email: 'e@x' })
  t.equal(basic.request.params.message, 'Who?')
  t.same(basic.request.params.requestedSchema.required, ['username', 'email'])
  t.equal(basic.text, 'User response: action=accept, content={"username":"u","email":"e@x"}')
  sent.length = 0
  const declined = call('tools/call', { name: 'test_elicitation', arguments: { message: 'Who?' } })
  const request = await waitFor(sent, m => m.method === 'elicitation/create')
  await session.handle({ jsonrpc: '2.0', id: request.id, result: { action: 'decline' } })
  t.equal((await declined).result.content[0].text, 'User response: action=decline, content={}', 'a decline carries no content')

  const defaults = (await answer('test_elicitation_sep1034_defaults', {}, {})).request.params.requestedSchema.properties
  t.same(Object.fromEntries(Object.entries(defaults).map(([k, v]) => [k, (v as Message).default])), { name: 'John Doe', age: 30, score: 95.5, status: 'active', verified: true })

  const enums = (await answer('test_elicitation_sep1330_enums', {}, {})).request.params.requestedSchema.properties
  t.same(enums.untitledSingle.enum, ['option1', 'option2', 'option3'])
  t.same(enums.titledSingle.oneOf[0], { const: 'value1', title: 'First Option' })
  t.equal(enums.legacyEnum.enumNames.length, enums.legacyEnum.enum.length)
  t.same(enums.untitledMulti.items.enum, ['option1', 'option2', 'option3'])
  t.same(enums.titledMulti.items.anyOf[2], { const: 'value3', title: 'Third Choice' })
})

t.test('resources, template, subscriptions, prompts and completion', async (t) => {
  const { call } = await fixtureSession()
  const uris = (await call('resources/list')).result.resources.map((r: Message) => r.uri)
  t.same(uris, ['test://static-text', 'test://static-binary', 'test://watched-resource'])
  t.same((await call('resources/read', { uri: 'test://static-text' })).result.contents,
    [{ uri: 'test://static-text', mimeType: 'text/plain', text: 'This is the content of the static text resource.' }])
  t.equal((await call('resources/read', { uri: 'test://static-binary' })).result.contents[0].blob, TEST_IMAGE_BASE64)
  const templated = (await call('resources/read', { uri: 'test://template/123/data' })).result.contents[0]
  t.equal(templated.uri, 'test://template/123/data')
  t.same(JSON.parse(templated.text), { id: '123', templateTest: true, data: 'Data for ID: 123' })
  t.same((await call('resources/read', { uri: 'test://watched-resource' })).result.contents[0].text, 'Watched resource content')
  t.same((await call('resources/subscribe', { uri: 'test://watched-resource' })).result, {})
  t.same((await call('resources/unsubscribe', { uri: 'test://watched-resource' })).result, {})

  const prompts = (await call('prompts/list')).result.prompts
  t.same(prompts.map((p: Message) => p.name), ['test_simple_prompt', 'test_prompt_with_arguments', 'test_prompt_with_embedded_resource', 'test_prompt_with_image', 'test_input_required_result_prompt'])
  t.ok(prompts.every((p: Message) => typeof p.description === 'string' && p.description !== ''))
  t.equal((await call('prompts/get', { name: 'test_simple_prompt' })).result.messages[0].content.text, 'This is a simple prompt for testing.')
  const withArgs = (await call('prompts/get', { name: 'test_prompt_with_arguments', arguments: { arg1: 'hello', arg2: 'world' } })).result
  t.equal(withArgs.messages[0].content.text, "Prompt with arguments: arg1='hello', arg2='world'")
  t.equal((await call('prompts/get', { name: 'test_prompt_with_arguments', arguments: { arg1: 'a' } })).error.code, -32602)
  const embedded = (await call('prompts/get', { name: 'test_prompt_with_embedded_resource', arguments: { resourceUri: 'test://x' } })).result
  t.same(embedded.messages[0].content.resource, { uri: 'test://x', mimeType: 'text/plain', text: 'Embedded resource content for testing.' })
  t.equal((await call('prompts/get', { name: 'test_prompt_with_image' })).result.messages[0].content.type, 'image')

  const complete = async (ref: Message, name: string, value: string): Promise<string[]> =>
    (await call('completion/complete', { ref, argument: { name, value } })).result.completion.values
  t.same(await complete({ type: 'ref/prompt', name: 'test_prompt_with_arguments' }, 'arg1', 'par'), ['paris', 'park', 'party'])
  t.same(await complete({ type: 'ref/prompt', name: 'test_prompt_with_arguments' }, 'arg1', 'test'), [])
  t.same(await complete({ type: 'ref/prompt', name: 'test_prompt_with_arguments' }, 'arg2', 'w'), ['world'])
  t.same(await complete({ type: 'ref/prompt', name: 'test_prompt_with_embedded_resource' }, 'resourceUri', 'test'), [], 'an argument without a completer has no values')
  t.same(await complete({ type: 'ref/resource', uri: 'test://template/{id}/data' }, 'id', '1'), ['1', '123'])
})
