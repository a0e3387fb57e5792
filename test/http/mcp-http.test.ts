import t from 'tap'
import { Agent, request } from 'undici'
import { buildTestApp } from '../helpers/build-app.js'
import { openSession, postMcp, rpcOverHttp, sseMessages } from '../helpers/rpc.js'
import { gatedTool, testTools } from '../helpers/engine.js'
import { waitUntil } from '../helpers/wait.js'
import { Type } from '@sinclair/typebox'
import { defineTool, textResult } from '../../src/tool-api/define-tool.js'

const INIT = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } } }
const RPC_SHAPE = { jsonrpc: '2.0', id: null, error: { code: Number, message: String } }

t.test('initialize issues a random session id that later requests use', async (t) => {
  const { app } = await buildTestApp(t)

  const a = await postMcp(app, INIT)
  const b = await postMcp(app, INIT)

  t.equal(a.statusCode, 200)
  t.match(a.headers['content-type'], /^application\/json/)
  t.match(a.json(), { jsonrpc: '2.0', id: 1, result: { protocolVersion: '2025-11-25' } })
  t.match(a.headers['mcp-session-id'], /^[0-9a-f-]{36}$/)
  t.not(a.headers['mcp-session-id'], b.headers['mcp-session-id'])
  const list = await rpcOverHttp(app, { method: 'tools/list' }, { 'mcp-session-id': a.headers['mcp-session-id'] as string })
  t.ok(list.result.tools.some((tool: { name: string }) => tool.name === 'echo_text'))
})

t.test('a request without Mcp-Session-Id after initialize answers 400', async (t) => {
  const { app } = await buildTestApp(t)
  await openSession(app)

  const res = await postMcp(app, { jsonrpc: '2.0', id: 2, method: 'tools/list' })

  t.equal(res.statusCode, 400)
  t.match(res.json(), RPC_SHAPE)
})

t.test('an unknown session id answers 404 with a JSON-RPC body', async (t) => {
  const { app } = await buildTestApp(t)

  const res = await postMcp(app, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, { 'mcp-session-id': 'nope' })

  t.equal(res.statusCode, 404)
  t.match(res.json(), { jsonrpc: '2.0', id: null, error: { code: -32001 } })
})

t.test('DELETE ends the session and later use answers 404', async (t) => {
  const { app } = await buildTestApp(t)
  const sid = await openSession(app)

  const del = await app.inject({ method: 'DELETE', url: '/mcp', headers: { 'mcp-session-id': sid } })
  const after = await postMcp(app, { jsonrpc: '2.0', id: 2, method: 'ping' }, { 'mcp-session-id': sid })
  const again = await app.inject({ method: 'DELETE', url: '/mcp', headers: { 'mcp-session-id': sid } })

  t.equal(del.statusCode, 200)
  t.equal(after.statusCode, 404)
  t.equal(again.statusCode, 404)
})

t.test('a DELETE sent with the POST headers (content-type JSON, no body, or a stray one) ends the session', async (t) => {
  const { app } = await buildTestApp(t)
  const empty = await openSession(app)
  const stray = await openSession(app)
  const json = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }

  const noBody = await app.inject({ method: 'DELETE', url: '/mcp', headers: { ...json, 'mcp-session-id': empty } })
  const withBody = await app.inject({ method: 'DELETE', url: '/mcp', headers: { ...json, 'mcp-session-id': stray }, payload: '{"not": ' })

  t.equal(noBody.statusCode, 200, noBody.body)
  t.equal(withBody.statusCode, 200, withBody.body)
  t.equal((await postMcp(app, { jsonrpc: '2.0', id: 2, method: 'ping' }, { 'mcp-session-id': empty })).statusCode, 404)
})

t.test('an unsupported MCP-Protocol-Version answers 400; a supported or absent one is accepted', async (t) => {
  const { app } = await buildTestApp(t)
  const sid = await openSession(app)

  const bad = await postMcp(app, { jsonrpc: '2.0', id: 2, method: 'ping' }, { 'mcp-session-id': sid, 'mcp-protocol-version': '1999-01-01' })
  const good = await postMcp(app, { jsonrpc: '2.0', id: 3, method: 'ping' }, { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' })
  const badGet = await app.inject({ method: 'GET', url: '/mcp', headers: { 'mcp-session-id': sid, 'mcp-protocol-version': 'x' } })

  t.equal(bad.statusCode, 400)
  t.match(bad.json(), RPC_SHAPE)
  t.equal(good.statusCode, 200)
  t.equal(badGet.statusCode, 400)
})

t.test('notifications and responses answer 202 with no body', async (t) => {
  const { app } = await buildTestApp(t)
  const sid = await openSession(app)

  const note = await postMcp(app, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 99 } }, { 'mcp-session-id': sid })
  const response = await postMcp(app, { jsonrpc: '2.0', id: 42, result: {} }, { 'mcp-session-id': sid })

  t.equal(note.statusCode, 202)
  t.equal(note.body, '')
  t.equal(response.statusCode, 202)
  t.equal(response.body, '')
})

t.test('a JSON-RPC batch answers 400 with the engine\'s -32600', async (t) => {
  const { app } = await buildTestApp(t)
  const sid = await openSession(app)

  const res = await postMcp(app, [{ jsonrpc: '2.0', id: 1, method: 'ping' }], { 'mcp-session-id': sid })
  const noSession = await postMcp(app, [INIT])

  t.equal(res.statusCode, 400)
  t.match(res.json(), { jsonrpc: '2.0', id: null, error: { code: -32600 } })
  t.equal(noSession.statusCode, 400)
  t.match(noSession.json(), { error: { code: -32600 } })
})

t.test('protocol errors on a valid request stay HTTP 200 with the JSON-RPC error', async (t) => {
  const { app } = await buildTestApp(t)
  const sid = await openSession(app)

  const res = await rpcOverHttp(app, { method: 'tools/call', params: { name: 'nope', arguments: {} } }, { 'mcp-session-id': sid })

  t.match(res, { error: { code: -32602 } })
})

t.test('a tool that reports progress answers with SSE: the progress notification, then the result', async (t) => {
  const { app } = await buildTestApp(t)
  const sid = await openSession(app)

  const res = await postMcp(app, { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'slow_tool', arguments: { ms: 1 }, _meta: { progressToken: 'p1' } } }, { 'mcp-session-id': sid })

  t.equal(res.statusCode, 200)
  t.match(res.headers['content-type'], /^text\/event-stream/)
  const messages = sseMessages(res.body)
  t.match(messages[0], { method: 'notifications/progress', params: { progressToken: 'p1', progress: 1 } })
  t.match(messages.at(-1), { id: 7, result: { content: [{ text: 'finished' }] } })
  t.ok(messages.findIndex(m => m.method === 'notifications/progress') < messages.findIndex(m => m.id === 7))
})

t.test('a client that accepts only JSON gets a plain JSON response even when the tool reports progress', async (t) => {
  const { app } = await buildTestApp(t)
  const sid = await openSession(app)

  const res = await postMcp(app, { jsonrpc: '2.0', id: 8, method: 'tools/call', params: { name: 'slow_tool', arguments: { ms: 1 }, _meta: { progressToken: 'p' } } }, { 'mcp-session-id': sid, accept: 'application/json' })

  t.equal(res.statusCode, 200)
  t.match(res.headers['content-type'], /^application\/json/)
  t.match(res.json(), { id: 8, result: { content: [{ text: 'finished' }] } })
})

t.test('a request the client cancels ends its POST with 202 and no body (spec: a cancelled request has no response)', async (t) => {
  const { app, runtime } = await buildTestApp(t)
  const sid = await openSession(app)
  const headers = { 'mcp-session-id': sid, accept: 'application/json' }

  const call = postMcp(app, { jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'slow_tool', arguments: { ms: 30_000 } } }, headers)
  // A cancellation that overtook the call's registration would be ignored (an unknown id): sent once it runs.
  await waitUntil(() => runtime.server.activeCalls().length === 1, 'the call to run')
  await postMcp(app, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 9 } }, headers)
  const res = await call

  t.equal(res.statusCode, 202)
  t.equal(res.body, '')
})

t.test('a missing or wildcard Accept is accepted (lenient)', async (t) => {
  const { app } = await buildTestApp(t)

  const none = await app.inject({ method: 'POST', url: '/mcp', headers: { 'content-type': 'application/json' }, payload: JSON.stringify(INIT) })
  const star = await app.inject({ method: 'POST', url: '/mcp', headers: { 'content-type': 'application/json', accept: '*/*' }, payload: JSON.stringify(INIT) })

  t.equal(none.statusCode, 200)
  t.equal(star.statusCode, 200)
})

t.test('the session cap answers initialize with 503 and Retry-After', async (t) => {
  const { app } = await buildTestApp(t, { config: { maxSessions: 2 } })
  await openSession(app)
  await openSession(app)

  const res = await postMcp(app, INIT)

  t.equal(res.statusCode, 503)
  t.match(res.headers['retry-after'], /^\d+$/)
  t.match(res.json(), RPC_SHAPE)
})

t.test('an idle session expires and later use answers 404; one in use lives on', async (t) => {
  // Idle time is measured on a clock the test moves; the real sweep (every 50 ms here) only looks.
  let now = Date.UTC(2026, 0, 1)
  const { app } = await buildTestApp(t, { config: { sessionIdleMs: 100 }, services: { clock: { now: () => now } } })
  const sid = await openSession(app)
  const active = await openSession(app)

  now += 60
  await postMcp(app, { jsonrpc: '2.0', id: 1, method: 'ping' }, { 'mcp-session-id': active })
  now += 60
  await waitUntil(() => app.mcpStats().sessions === 1, 'the sweep to end the session idle for 120 ms')
  const idle = await postMcp(app, { jsonrpc: '2.0', id: 2, method: 'ping' }, { 'mcp-session-id': sid })
  const used = await postMcp(app, { jsonrpc: '2.0', id: 3, method: 'ping' }, { 'mcp-session-id': active })

  t.equal(idle.statusCode, 404)
  t.equal(used.statusCode, 200, 'the session used 60 ms ago was kept')
})

t.test('PUT on the endpoint answers 405 with Allow', async (t) => {
  const { app } = await buildTestApp(t)

  const res = await app.inject({ method: 'PUT', url: '/mcp' })

  t.equal(res.statusCode, 405)
  t.equal(res.headers.allow, 'GET, POST, DELETE, OPTIONS')
  t.match(res.json(), RPC_SHAPE)
})

t.test('stateless: every POST stands alone, GET and DELETE answer 405 with Allow: POST, OPTIONS', async (t) => {
  const { app } = await buildTestApp(t, { config: { mode: 'stateless' } })

  const init = await postMcp(app, INIT)
  const list = await rpcOverHttp(app, { method: 'tools/list' })
  const call = await rpcOverHttp(app, { method: 'tools/call', params: { name: 'echo_text', arguments: { text: 'hi' } } }, { 'mcp-session-id': 'ignored' })
  const get = await app.inject({ method: 'GET', url: '/mcp' })
  const del = await app.inject({ method: 'DELETE', url: '/mcp' })
  const note = await postMcp(app, { jsonrpc: '2.0', method: 'notifications/initialized' })

  t.equal(init.statusCode, 200)
  t.equal(init.headers['mcp-session-id'], undefined)
  t.ok(list.result.tools.length > 0)
  t.match(call, { result: { content: [{ text: 'hi' }] } })
  t.equal(get.statusCode, 405)
  t.equal(get.headers.allow, 'POST, OPTIONS')
  t.equal(del.statusCode, 405)
  t.equal(del.headers.allow, 'POST, OPTIONS')
  t.match(get.json(), RPC_SHAPE)
  t.equal(note.statusCode, 202)
})

t.test('stateless: progress still streams over the POST\'s SSE response', async (t) => {
  const { app } = await buildTestApp(t, { config: { mode: 'stateless' } })

  const res = await postMcp(app, { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'slow_tool', arguments: { ms: 1 }, _meta: { progressToken: 1 } } })

  t.match(res.headers['content-type'], /^text\/event-stream/)
  t.match(sseMessages(res.body).map(m => m.method ?? m.id), ['notifications/progress', 'notifications/message', 'notifications/progress', 3])
})

t.test('over a real socket: the GET stream carries server→client requests, a second GET answers 409, the answer POST gets 202', { timeout: 15000 }, async (t) => {
  const { app } = await buildTestApp(t)
  const base = await app.listen({ host: '127.0.0.1', port: 0 })
  const url = `${base}/mcp`
  const sid = await openSession(app, { sampling: {} })
  const dispatcher = new Agent()

  const get = await request(url, { dispatcher, method: 'GET', headers: { accept: 'text/event-stream', 'mcp-session-id': sid } })
  const second = await request(url, { dispatcher, method: 'GET', headers: { accept: 'text/event-stream', 'mcp-session-id': sid } })
  // A JSON-only POST sends related messages to the GET stream; the sampling request lands there.
  const call = request(url, {
    dispatcher,
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json', 'mcp-session-id': sid },
    body: JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'ask_client', arguments: {} } })
  })
  let text = ''
  let sampling: Record<string, any> | undefined
  for await (const chunk of get.body) {
    text += chunk.toString()
    sampling = sseMessages(text).find(m => m.method === 'sampling/createMessage')
    if (sampling !== undefined) break
  }
  const answer = await request(url, {
    dispatcher,
    method: 'POST',
    headers: { 'content-type': 'application/json', 'mcp-session-id': sid },
    body: JSON.stringify({ jsonrpc: '2.0', id: sampling!.id, result: { role: 'assistant', content: { type: 'text', text: 'sampled' }, model: 'm' } })
  })
  const result = await call

  t.equal(get.statusCode, 200)
  t.match(get.headers['content-type'], /^text\/event-stream/)
  t.equal(second.statusCode, 409)
  t.match(await second.body.json(), RPC_SHAPE)
  t.equal(answer.statusCode, 202)
  await answer.body.dump()
  t.match(await result.body.json(), { id: 5, result: { content: [{ text: /sampled/ }] } })
  await dispatcher.destroy()
})

t.test('GET and DELETE need a known session id', async (t) => {
  const { app } = await buildTestApp(t)

  const getMissing = await app.inject({ method: 'GET', url: '/mcp' })
  const getUnknown = await app.inject({ method: 'GET', url: '/mcp', headers: { 'mcp-session-id': 'nope' } })
  const delMissing = await app.inject({ method: 'DELETE', url: '/mcp' })

  t.equal(getMissing.statusCode, 400)
  t.equal(getUnknown.statusCode, 404)
  t.equal(delMissing.statusCode, 400)
  t.match(delMissing.json(), RPC_SHAPE)
})

t.test('close() drains: an in-flight call finishes, a request queued behind it gets a JSON-RPC 503', { timeout: 15000 }, async (t) => {
  const gated = gatedTool()
  const { app } = await buildTestApp(t, { tools: [...testTools, gated.tool] })
  const base = await app.listen({ host: '127.0.0.1', port: 0 })
  const sid = await openSession(app)
  // One connection, pipelined: the second request reaches the server only after the first answers.
  const { Pool } = await import('undici')
  const pool = new Pool(base, { connections: 1, pipelining: 2 })
  const headers = { 'content-type': 'application/json', accept: 'application/json', 'mcp-session-id': sid }

  const slow = pool.request({ path: '/mcp', method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'gated', arguments: {} } }) })
  const queued = pool.request({ path: '/mcp', method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping' }) })
  await waitUntil(() => gated.started === 1, 'the first call to reach its tool')
  const closed = app.close()
  await waitUntil(() => app.mcpDraining, 'the drain to begin')
  gated.release()
  const [first, second] = await Promise.all([slow, queued])

  t.equal(first.statusCode, 200)
  t.match(await first.body.json(), { id: 1, result: { content: [{ text: 'released' }] } })
  t.equal(second.statusCode, 503)
  t.equal(second.headers['retry-after'], '1')
  t.match(await second.body.json(), RPC_SHAPE)
  await closed
  await pool.destroy()
})

t.test('mcpDrain answers true as the last request in flight is answered, however long its grace', { timeout: 15000 }, async (t) => {
  const gated = gatedTool()
  const { app } = await buildTestApp(t, { config: { mode: 'stateless' }, tools: [...testTools, gated.tool] })
  const base = await app.listen({ host: '127.0.0.1', port: 0 })
  const call = (id: number) => request(`${base}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'gated', arguments: {} } }) })
  const calls = [call(1), call(2)]
  await waitUntil(() => gated.started === 2, 'both calls to reach their tool')
  let drained: boolean | undefined

  const drain = app.mcpDrain(3_600_000).then(ok => { drained = ok })
  await new Promise(resolve => setImmediate(resolve))
  const still = drained
  gated.release()
  const answers = await Promise.all(calls)
  await drain

  t.equal(still, undefined, 'two requests in flight: the drain waits')
  t.equal(drained, true, 'the drain ended with the last answer, an hour before its grace would have')
  t.strictSame(answers.map(a => a.statusCode), [200, 200])
  t.equal(app.mcpStats().inflight, 0)
  await Promise.all(answers.map(a => a.body.dump()))
})

t.test('while draining, a new GET stream gets 503 with Retry-After and Connection: close', async (t) => {
  const { app } = await buildTestApp(t)
  const sid = await openSession(app)

  t.equal(await app.mcpDrain(0), true, 'nothing was in flight')
  const res = await app.inject({ method: 'GET', url: '/mcp', headers: { accept: 'text/event-stream', 'mcp-session-id': sid } })

  t.equal(res.statusCode, 503)
  t.equal(res.headers['retry-after'], '1')
  t.equal(res.headers.connection, 'close')
  t.match(res.json(), RPC_SHAPE)
})

t.test('over maxInflightRequests a POST gets 503 + Retry-After: 1 before its body is read; finished POSTs free their slot', { timeout: 20000 }, async (t) => {
  let started = 0
  let release: () => void = () => {}
  const gate = new Promise<void>(resolve => { release = resolve })
  const held = defineTool({
    name: 'held_tool',
    title: 'Held',
    category: 'guide',
    description: 'Waits until the test releases it, reporting progress first.',
    annotations: {},
    input: Type.Object({}),
    async run (_args, ctx) {
      started++
      await ctx.progress(1, 2)
      await gate
      return textResult('released')
    }
  })
  const { app } = await buildTestApp(t, { config: { mode: 'stateless', maxInflightRequests: 2, bodyLimit: 2048 }, tools: [...testTools, held] })
  const base = await app.listen({ host: '127.0.0.1', port: 0 })
  const url = `${base}/mcp`
  const post = (body: string) => request(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body })
  const call = (id: number, meta?: Record<string, unknown>) => JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'held_tool', arguments: {}, _meta: meta } })

  // One answers as SSE (hijacked reply), one as plain JSON: both kinds must free their slot.
  const first = post(call(1, { progressToken: 'p' }))
  const second = post(call(2))
  const running = (): number => started
  await waitUntil(() => running() === 2, 'both held calls to run')
  t.equal(started, 2, 'both held calls are running')

  const refused = await post(JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'ping' }))
  const big = await post(JSON.stringify({ jsonrpc: '2.0', id: 4, method: 'ping', params: { pad: 'x'.repeat(4096) } }))

  t.equal(refused.statusCode, 503)
  t.equal(refused.headers['retry-after'], '1')
  t.strictSame(await refused.body.json(), { jsonrpc: '2.0', id: null, error: { code: -32000, message: 'Server overloaded: too many requests in flight; retry later' } })
  t.equal(big.statusCode, 503, 'refused before the over-limit body is read (else 413)')
  await big.body.dump()

  release()
  const [a, b] = await Promise.all([first, second])
  t.equal(a.statusCode, 200)
  t.match(await a.body.text(), /released/)
  t.equal(b.statusCode, 200)
  t.match(await b.body.json(), { id: 2, result: { content: [{ text: 'released' }] } })

  const after = await post(JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'ping' }))
  t.equal(after.statusCode, 200)
  t.strictSame(await after.body.json(), { jsonrpc: '2.0', id: 5, result: {} })
  const tooBig = await post(JSON.stringify({ jsonrpc: '2.0', id: 6, method: 'ping', params: { pad: 'x'.repeat(4096) } }))
  t.equal(tooBig.statusCode, 413, 'with a free slot the body limit applies as before')
  await tooBig.body.dump()
})
