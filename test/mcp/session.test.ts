import t from 'tap'
import { Type } from '@sinclair/typebox'
import { initializedSession, testEngine, testTools } from '../helpers/engine.js'
import { defineTool, Inject, textResult } from '../../src/tool-api/define-tool.js'
import { CallHandle } from '../../src/mcp/call/call-handle.js'
import { Deadlines } from '../../src/mcp/call/deadlines.js'
import { toolError } from '../../src/base/errors.js'
import { waitUntil } from '../helpers/wait.js'

const rpc = (id: number | string, method: string, params?: Record<string, unknown>) => ({ jsonrpc: '2.0', id, method, params })

t.test('initialize answers the client\'s version when supported, else the latest', async (t) => {
  const { server } = testEngine()

  const known = JSON.parse((await server.openSession().handle(rpc(1, 'initialize', { protocolVersion: '2025-03-26', capabilities: {} })))!)
  const unknown = JSON.parse((await server.openSession().handle(rpc(1, 'initialize', { protocolVersion: '1999-01-01', capabilities: {} })))!)

  t.equal(known.result.protocolVersion, '2025-03-26')
  t.equal(unknown.result.protocolVersion, '2025-11-25')
  t.match(known.result, { serverInfo: { name: 'test', version: '0.0.0' }, instructions: 'hi', capabilities: { tools: {}, logging: {}, completions: {} } })
})

t.test('a second initialize on the same session is an invalid request; the first one stands', async (t) => {
  const session = testEngine().server.openSession()

  await session.handle(rpc(1, 'initialize', { protocolVersion: '2025-03-26', capabilities: {} }))
  const again = JSON.parse((await session.handle(rpc(2, 'initialize', { protocolVersion: '2025-11-25', capabilities: {} })))!)

  t.match(again, { id: 2, error: { code: -32600, message: /already initialized/ } })
  t.equal(session.protocolVersion, '2025-03-26')
})

t.test('requests other than ping before initialize are refused; ping is answered', async (t) => {
  const session = testEngine().server.openSession()

  const ping = JSON.parse((await session.handle(rpc(1, 'ping')))!)
  const list = JSON.parse((await session.handle(rpc(2, 'tools/list')))!)

  t.strictSame(ping, { jsonrpc: '2.0', id: 1, result: {} })
  t.equal(list.error.code, -32600)
})

t.test('protocol errors: unknown method -32601, unknown tool -32602, batch -32600, bad envelope -32600', async (t) => {
  const { session, call } = await initializedSession(testEngine())

  const method = await call('nope/nothing')
  const tool = await call('tools/call', { name: 'no_such_tool', arguments: {} })
  const batch = JSON.parse((await session.handle([rpc(9, 'ping')]))!)
  const envelope = JSON.parse((await session.handle({ id: 3, method: 'ping' }))!)
  const badId = JSON.parse((await session.handle({ jsonrpc: '2.0', id: null, method: 'ping' }))!)

  t.equal(method.error.code, -32601)
  t.equal(tool.error.code, -32602)
  t.match(tool.error.message, /no_such_tool/)
  t.match(batch, { id: null, error: { code: -32600 } })
  t.match(envelope, { id: null, error: { code: -32600 } })
  t.match(badId, { id: null, error: { code: -32600 } })
})

t.test('a tool not offered here answers the error its definition declares; one that declares none is an unknown tool', async (t) => {
  const gated = defineTool({
    name: 'needs_semantic',
    title: 'Needs Semantic',
    category: 'guide',
    description: 'Only listed with an embeddings provider.',
    annotations: {},
    input: Type.Object({ semantic: Inject('semantic') }),
    whenUnavailable: { code: 'EMBEDDINGS_NOT_CONFIGURED', message: 'needs_semantic needs a provider', hint: 'use search_code' },
    run: () => textResult('ok')
  })
  const engine = testEngine({ tools: [...testTools, gated] })
  t.same(engine.registry.unavailable, { needs_search: ['search'], needs_semantic: ['semantic'] })
  const { call } = await initializedSession(engine)
  t.same((await call('tools/call', { name: 'needs_semantic', arguments: { anything: 1 } })).result, {
    content: [{ type: 'text', text: 'ERROR EMBEDDINGS_NOT_CONFIGURED: needs_semantic needs a provider. Hint: use search_code.' }],
    isError: true
  }, 'a tool result the model can act on, whatever the arguments')
  t.equal((await call('tools/call', { name: 'needs_search', arguments: {} })).error.code, -32602)
  t.notOk((await call('tools/list')).result.tools.some((tool: { name: string }) => tool.name === 'needs_semantic'), 'never listed')
})

t.test('notifications get no response', async (t) => {
  const { session } = await initializedSession(testEngine())

  t.equal(await session.handle({ jsonrpc: '2.0', method: 'notifications/whatever' }), undefined)
})

t.test('tools/list hides a tool whose service is not configured, and calling it is an unknown tool', async (t) => {
  const engine = testEngine()
  const { call } = await initializedSession(engine)

  const list = await call('tools/list')
  const res = await call('tools/call', { name: 'needs_search', arguments: {} })

  t.notOk(list.result.tools.some((tool: { name: string }) => tool.name === 'needs_search'))
  t.strictSame(engine.registry.unavailable, { needs_search: ['search'] })
  t.equal(res.error.code, -32602)
})

t.test('injected parameters never appear in the schema and a client cannot supply them', async (t) => {
  const { call } = await initializedSession(testEngine())

  const list = await call('tools/list')
  const echo = list.result.tools.find((tool: { name: string }) => tool.name === 'echo_text')
  const res = await call('tools/call', { name: 'echo_text', arguments: { text: 'a', clock: { now: 1 } } })

  t.notOk('clock' in echo.inputSchema.properties)
  t.equal(echo.inputSchema.additionalProperties, false)
  t.equal(res.result.isError, true)
  t.match(res.result.content[0].text, /^ERROR UNKNOWN_ARGUMENT: clock: unknown argument; valid arguments: text, times, mode/)
})

t.test('invalid arguments are a tool result naming the field, the rule and the value received', async (t) => {
  const { call } = await initializedSession(testEngine())

  const tooBig = await call('tools/call', { name: 'echo_text', arguments: { text: 'a', times: 500 } })
  const missing = await call('tools/call', { name: 'echo_text', arguments: {} })
  const badEnum = await call('tools/call', { name: 'echo_text', arguments: { text: 'a', mode: 'loud' } })

  t.equal(tooBig.result.isError, true)
  t.match(tooBig.result.content[0].text, 'times: must be <= 3, received 500')
  t.match(missing.result.content[0].text, 'text: is required')
  t.match(badEnum.result.content[0].text, 'mode: must be one of "plain", "upper", received "loud"')
})

t.test('null for an optional parameter means absent, and defaults are applied before run', async (t) => {
  const { call } = await initializedSession(testEngine())

  const res = await call('tools/call', { name: 'echo_text', arguments: { text: 'ab', times: null, mode: null } })

  t.notOk(res.result.isError)
  t.strictSame(res.result.structuredContent, { length: 2, clockType: 'function' })
})

t.test('a tool error reaches the model verbatim; an unexpected exception is masked and logged with a ref', async (t) => {
  const engine = testEngine()
  const { call } = await initializedSession(engine)

  const own = await call('tools/call', { name: 'fail_tool', arguments: { kind: 'tool' } })
  const crash = await call('tools/call', { name: 'fail_tool', arguments: { kind: 'crash' } })

  t.equal(own.result.content[0].text, "ERROR PATH_NOT_FOUND: No file 'x'. Hint: call list_directory.")
  const text: string = crash.result.content[0].text
  const ref = /^Tool 'fail_tool' failed \(ref ([0-9a-f]{8})\)$/.exec(text)?.[1]
  t.ok(ref, text)
  t.notMatch(text, /shadow|Error|at /)
  t.ok(engine.lines.some(l => l.ref === ref && l.msg === 'tool failed'))
})

t.test('a tool error with a cause: the model reads the message only, the cause goes to the log at debug with its stack', async (t) => {
  const behind = Object.assign(new Error('the parsing thread crashed: out of memory'), { code: 'ERR_WORKER_OUT_OF_MEMORY' })
  const engine = testEngine({
    tools: [defineTool({
      name: 'caused_tool',
      title: 'Caused',
      category: 'guide',
      description: 'Fails with a tool error that has a cause, for the cause-logging test.',
      annotations: {},
      input: Type.Object({}),
      run () { throw toolError('PARSE_FAILED', 'the parser stopped', 'read the file instead', behind) }
    })]
  })
  const { call } = await initializedSession(engine)

  const res = await call('tools/call', { name: 'caused_tool', arguments: {} })

  t.equal(res.result.content[0].text, 'ERROR PARSE_FAILED: the parser stopped. Hint: read the file instead.')
  t.match(engine.lines.find(l => l.msg === 'tool error with a cause'), { level: 20, tool: 'caused_tool', err: { message: /the parser stopped.*: the parsing thread crashed: out of memory$/, stack: /caused by: Error: the parsing thread crashed/, code: 'APP_ERR_TOOL' } })
})

t.test('every call logs tool, durationMs and outcome', async (t) => {
  const engine = testEngine()
  const { call } = await initializedSession(engine)

  await call('tools/call', { name: 'echo_text', arguments: { text: 'a' } })
  await call('tools/call', { name: 'echo_text', arguments: {} })

  const calls = engine.lines.filter(l => l.msg === 'tool call')
  t.match(calls, [{ tool: 'echo_text', outcome: 'ok', durationMs: Number }, { tool: 'echo_text', outcome: 'invalid_arguments' }])
  t.strictSame(calls.map(l => l.level), [20, 20], 'at debug unless configured: the engine has the config\'s default')
})

t.test('the per-tool deadline aborts the signal and returns a TIMEOUT tool error', async (t) => {
  const { call } = await initializedSession(testEngine({}, { toolTimeoutMs: 100 }))

  const res = await call('tools/call', { name: 'slow_tool', arguments: { ms: 60000 } })

  t.equal(res.result.isError, true)
  t.match(res.result.content[0].text, /^ERROR TIMEOUT: slow_tool did not finish within 100 ms/)
})

t.test('notifications/cancelled aborts the call and no response is sent', async (t) => {
  const { session } = await initializedSession(testEngine())

  const pending = session.handle(rpc('c1', 'tools/call', { name: 'slow_tool', arguments: { ms: 60000 } }))
  await new Promise(resolve => setImmediate(resolve))
  t.equal(session.inflightCount, 1)
  await session.handle({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'c1', reason: 'user' } })

  t.equal(await pending, undefined)
  t.equal(session.inflightCount, 0)
})

t.test('progress and log notifications go to the request channel, progress only for a token the client sent', async (t) => {
  const { session } = await initializedSession(testEngine())
  const related: Array<Record<string, unknown>> = []
  const channel = { send: (m: string) => related.push(JSON.parse(m)) }

  await session.handle(rpc(1, 'tools/call', { name: 'slow_tool', arguments: { ms: 1 }, _meta: { progressToken: 'p' } }), channel)
  const withToken = related.splice(0)
  await session.handle(rpc(2, 'tools/call', { name: 'slow_tool', arguments: { ms: 1 } }), channel)

  t.match(withToken, [
    { method: 'notifications/progress', params: { progressToken: 'p', progress: 1, total: 2, message: 'started' } },
    { method: 'notifications/message', params: { level: 'info', logger: 'slow_tool', data: { step: 'waiting' } } },
    { method: 'notifications/progress', params: { progressToken: 'p', progress: 2 } }
  ])
  t.strictSame(related.map(m => m.method), ['notifications/message'])
})

t.test('logging/setLevel filters notifications and rejects unknown levels', async (t) => {
  const { session, call } = await initializedSession(testEngine())
  const related: string[] = []

  const bad = await call('logging/setLevel', { level: 'loud' })
  await call('logging/setLevel', { level: 'error' })
  await session.handle(rpc(50, 'tools/call', { name: 'slow_tool', arguments: { ms: 1 } }), { send: m => related.push(m) })

  t.equal(bad.error.code, -32602)
  t.strictSame(related, [])
})

t.test('a tool can send sampling/createMessage and receives the client\'s answer', async (t) => {
  const { session, sent } = await initializedSession(testEngine(), { sampling: {} })

  const pending = session.handle(rpc(7, 'tools/call', { name: 'ask_client', arguments: {} }))
  await new Promise(resolve => setImmediate(resolve))
  const request = sent.find(m => m.method === 'sampling/createMessage')!
  t.ok(request, 'request sent to the client')
  await session.handle({ jsonrpc: '2.0', id: request.id, result: { role: 'assistant', content: { type: 'text', text: 'yo' } } })
  const res = JSON.parse((await pending)!)

  t.match(res.result.content[0].text, /"text":"yo"/)
})

t.test('server→client requests are refused when the client lacks the capability', async (t) => {
  const { call, sent } = await initializedSession(testEngine())

  const res = await call('tools/call', { name: 'ask_client', arguments: {} })

  t.match(res.result.content[0].text, /^ERROR CLIENT_CAPABILITY_MISSING: .*'sampling'/)
  t.strictSame(sent.filter(m => m.method === 'sampling/createMessage'), [])
})

t.test('stateless sessions serve requests without initialize', async (t) => {
  const session = testEngine().server.openSession({ stateless: true })

  const res = JSON.parse((await session.handle(rpc(1, 'tools/list')))!)

  t.ok(Array.isArray(res.result.tools))
})

t.test('unknown resources answer -32002 and prompts/get validates required arguments', async (t) => {
  const { call } = await initializedSession(testEngine({
    prompts: [{ name: 'p', arguments: [{ name: 'topic', required: true }], get: (a) => ({ messages: [{ role: 'user', content: { type: 'text', text: `about ${a.topic}` } }] }) }]
  }))

  const resource = await call('resources/read', { uri: 'file:///etc/passwd' })
  const missing = await call('prompts/get', { name: 'p', arguments: {} })
  const ok = await call('prompts/get', { name: 'p', arguments: { topic: 'x' } })

  t.equal(resource.error.code, -32002)
  t.equal(missing.error.code, -32602)
  t.equal(ok.result.messages[0].content.text, 'about x')

  const unknown = await call('prompts/get', { name: 'q' })
  t.match(unknown.error, { code: -32602, message: /unknown prompt 'q'; prompts\/list names every prompt/ })
  for (const args of [['x'], 'topic=x', 7]) {
    t.match((await call('prompts/get', { name: 'p', arguments: args })).error, { code: -32602, message: /'arguments' must be an object of strings/ }, JSON.stringify(args))
  }
  t.match((await call('prompts/get', { name: 'p', arguments: { topic: 3 } })).error, { code: -32602, message: /argument 'topic' must be a string/ })
})

t.test('a server→client request: the client\'s error becomes a tool error; closing the session rejects what is pending', async (t) => {
  const { session, sent } = await initializedSession(testEngine(), { sampling: {} })

  const failed = session.handle(rpc(8, 'tools/call', { name: 'ask_client', arguments: {} }))
  await new Promise(resolve => setImmediate(resolve))
  const first = sent.find(m => m.method === 'sampling/createMessage')!
  await session.handle({ jsonrpc: '2.0', id: first.id, error: { code: -1, message: 'user declined' } })
  t.match(JSON.parse((await failed)!).result.content[0].text, /^ERROR CLIENT_REQUEST_FAILED: the client answered with an error: user declined/)
  t.equal(await session.handle({ jsonrpc: '2.0', id: 9999, result: {} }), undefined, 'an answer to nothing is ignored')

  const left = session.handle(rpc(9, 'tools/call', { name: 'ask_client', arguments: {} }))
  await new Promise(resolve => setImmediate(resolve))
  t.equal(session.inflightCount, 1)
  session.close()
  session.close()
  t.equal(await left, undefined, 'a call cut by the session closing gets no answer (there is no one to send it to)')
  t.equal(session.inflightCount, 0)
})

t.test('stateless sessions cannot send server→client requests: the tool gets a clear error', async (t) => {
  const session = testEngine().server.openSession({ stateless: true })
  await session.handle(rpc(1, 'initialize', { protocolVersion: '2025-11-25', capabilities: { sampling: {} }, clientInfo: { name: 't', version: '1' } }))

  const res = JSON.parse((await session.handle(rpc(2, 'tools/call', { name: 'ask_client', arguments: {} })))!)

  t.match(res.result.content[0].text, /^ERROR CLIENT_CAPABILITY_MISSING: 'sampling\/createMessage' needs a channel back to the client, which stateless HTTP does not have/)
})

t.test('readers get a signal that aborts when the session closes, even one asked for after the close', async (t) => {
  const seen: AbortSignal[] = []
  const engine = testEngine({
    resources: [{ uri: 'test://signal', name: 'signal', read: (ctx) => { seen.push(ctx.signal); return [{ uri: 'test://signal', text: 'ok' }] } }]
  })
  const { session, call } = await initializedSession(engine)

  const read = await call('resources/read', { uri: 'test://signal' })
  t.equal(read.result.contents[0].text, 'ok')
  t.equal(seen[0].aborted, false)
  session.close()
  t.equal(seen[0].aborted, true)

  const late = engine.server.openSession({ send: () => {} })
  late.close()
  t.equal(late.closedSignal.aborted, true, 'created after the close, already aborted')
})

t.test('tools/list cursor must be a string; null is no cursor', async (t) => {
  const { call } = await initializedSession(testEngine())

  t.match(await call('tools/list', { cursor: 5 }), { error: { code: -32602, message: /'cursor' must be a string/ } })
  t.ok(Array.isArray((await call('tools/list', { cursor: null })).result.tools))
})

t.test('an unexpected failure inside a request is an internal error, logged with its method', async (t) => {
  const engine = testEngine({ resources: [{ uri: 'test://boom', name: 'boom', read: () => { throw new Error('disk on fire') } }] })
  const { call } = await initializedSession(engine)

  const res = await call('resources/read', { uri: 'test://boom' })

  t.equal(res.error.code, -32603)
  t.notMatch(res.error.message, /disk on fire/, 'the cause stays in the log')
  t.ok(engine.lines.some(l => l.msg === 'request failed' && l.method === 'resources/read'))
})

t.test('completion/complete and resources/subscribe refuse malformed or unknown references with -32602 / -32002', async (t) => {
  const { call } = await initializedSession(testEngine({
    prompts: [{ name: 'p', arguments: [{ name: 'topic' }], get: () => ({ messages: [] }), complete: { topic: (v) => Array.from({ length: 150 }, (_, i) => `${v}${i}`) } }]
  }))

  t.match(await call('completion/complete', {}), { error: { code: -32602, message: /'ref' and 'argument' are required/ } })
  t.match(await call('completion/complete', { ref: { type: 'ref/prompt', name: 'p' }, argument: { name: '' } }), { error: { code: -32602, message: /'name' must be a non-empty string/ } })
  t.match(await call('completion/complete', { ref: { type: 'ref/prompt', name: 'nope' }, argument: { name: 'topic' } }), { error: { code: -32602, message: /unknown prompt 'nope'/ } })
  t.match(await call('completion/complete', { ref: { type: 'ref/resource', uri: 'test://{x}' }, argument: { name: 'x' } }), { error: { code: -32002 } })
  t.match(await call('completion/complete', { ref: { type: 'ref/other' }, argument: { name: 'x' } }), { error: { code: -32602, message: /ref\.type must be/ } })
  const many = await call('completion/complete', { ref: { type: 'ref/prompt', name: 'p' }, argument: { name: 'topic', value: 't' } })
  t.strictSame([many.result.completion.values.length, many.result.completion.total, many.result.completion.hasMore], [100, 150, true], 'at most 100 values, with the total')
  t.match(await call('resources/subscribe', { uri: 'test://nothing' }), { error: { code: -32002 } })
})

t.test('a call handle: the signal is aborted even when first asked for after the abort; a second abort changes nothing', async (t) => {
  const handle = new CallHandle()
  handle.abort(new Error('first'), 'cancel')
  handle.abort(new Error('second'), 'timeout')

  t.equal(handle.signal.aborted, true)
  t.equal((handle.signal.reason as Error).message, 'first')
  t.strictSame([handle.cancelled, handle.timedOut], [true, false])
})

t.test('deadlines still fire after the sweep has stopped for being idle', async (t) => {
  // The engine's deadline sweeps, seen as they are first armed (the engine keeps them to itself).
  const sweeps = new Set<Deadlines>()
  const watch = Deadlines.prototype.watch
  Deadlines.prototype.watch = function (this: Deadlines, ...args: Parameters<Deadlines['watch']>) {
    sweeps.add(this)
    watch.apply(this, args)
  }
  t.teardown(() => { Deadlines.prototype.watch = watch })
  const { call } = await initializedSession(testEngine({}, { toolTimeoutMs: 100 }))
  // An asynchronous call arms the sweep (a synchronous one, such as echo_text, never does).
  await call('tools/call', { name: 'slow_tool', arguments: { ms: 0 } })
  // After 40 idle ticks of 25 ms the sweeper clears itself, and the next call must re-arm it.
  await waitUntil(() => sweeps.size === 1 && [...sweeps].every(d => !d.sweeping), 'the idle sweep to stop')

  const res = await call('tools/call', { name: 'slow_tool', arguments: { ms: 60000 } })

  t.match(res.result.content[0].text, /^ERROR TIMEOUT: slow_tool did not finish within 100 ms/)
})

t.test('tools/list pages: the nextCursor of one page fetches the next, a forged cursor is -32602', async (t) => {
  const { call } = await initializedSession(testEngine({ pageSize: 2 }))

  const first = await call('tools/list', {})
  const second = await call('tools/list', { cursor: first.result.nextCursor })

  t.equal(first.result.tools.length, 2)
  t.ok(second.result.tools.length > 0)
  t.notSame(second.result.tools[0].name, first.result.tools[0].name)
  t.match(await call('tools/list', { cursor: 'forged' }), { error: { code: -32602 } })
})
