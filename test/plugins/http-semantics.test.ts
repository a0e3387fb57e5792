import t from 'tap'
import { buildTestApp } from '../helpers/build-app.js'
import { openSession, postMcp } from '../helpers/rpc.js'

// Streamable HTTP rules (spec 2025-11-25 basic/transports) found wrong under test, one regression each.

const INIT = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } } }
const RPC_SHAPE = { jsonrpc: '2.0', id: null, error: { code: Number, message: String } }

t.test('a second initialize on a live session is refused with 400 -32600', async (t) => {
  const { app } = await buildTestApp(t)
  const session = await openSession(app)

  const again = await postMcp(app, { ...INIT, id: 7 }, { 'mcp-session-id': session })

  t.equal(again.statusCode, 400)
  t.match(again.json(), { jsonrpc: '2.0', id: 7, error: { code: -32600, message: /already initialized/ } })
  t.equal((await postMcp(app, { jsonrpc: '2.0', id: 8, method: 'ping' }, { 'mcp-session-id': session })).statusCode, 200, 'the session goes on')
})

t.test('a body without "jsonrpc": "2.0" is a 400 with -32600, whatever its shape', async (t) => {
  const { app } = await buildTestApp(t)
  const session = await openSession(app)

  for (const body of [{ id: 1, method: 'ping' }, { jsonrpc: '1.0', id: 1, method: 'ping' }, { jsonrpc: '2.0', id: 1 }, { id: 1, result: {} }, { method: 'notifications/initialized' }]) {
    const res = await postMcp(app, body, { 'mcp-session-id': session })
    t.equal(res.statusCode, 400, JSON.stringify(body))
    t.match(res.json(), { jsonrpc: '2.0', error: { code: -32600 } })
  }
})

t.test('a POST that accepts only text/event-stream, or a GET that does not accept it, is 406', async (t) => {
  const { app } = await buildTestApp(t)
  const session = await openSession(app)

  const sseOnly = await postMcp(app, { jsonrpc: '2.0', id: 2, method: 'ping' }, { 'mcp-session-id': session, accept: 'text/event-stream' })
  const jsonOnly = await postMcp(app, { jsonrpc: '2.0', id: 3, method: 'ping' }, { 'mcp-session-id': session, accept: 'application/json' })
  const getJson = await app.inject({ method: 'GET', url: '/mcp', headers: { 'mcp-session-id': session, accept: 'application/json' } })

  t.equal(sseOnly.statusCode, 406)
  t.match(sseOnly.json(), RPC_SHAPE)
  t.match(sseOnly.json().error.message, /application\/json/)
  t.equal(jsonOnly.statusCode, 200, 'plain JSON clients are served (an SSE reply falls back to JSON)')
  t.equal(getJson.statusCode, 406)
  t.match(getJson.json(), RPC_SHAPE)
})

t.test('OPTIONS with a body still answers 405 with a JSON-RPC body', async (t) => {
  const { app } = await buildTestApp(t)

  const res = await app.inject({ method: 'OPTIONS', url: '/mcp', headers: { 'content-type': 'application/json' }, payload: '{"x":1}' })

  t.equal(res.statusCode, 405)
  t.match(res.json(), RPC_SHAPE)
})

t.test('an unsupported MCP-Protocol-Version names the supported ones', async (t) => {
  const { app } = await buildTestApp(t)
  const session = await openSession(app)

  const res = await postMcp(app, { jsonrpc: '2.0', id: 1, method: 'ping' }, { 'mcp-session-id': session, 'mcp-protocol-version': '1999-01-01' })

  t.equal(res.statusCode, 400)
  t.match(res.json().error.message, /1999-01-01.*supported: 2025-11-25, 2025-06-18/)
})

t.test('an initialize without protocolVersion or capabilities opens no session: -32602, no Mcp-Session-Id', async (t) => {
  const { app } = await buildTestApp(t, { config: { maxSessionsPerClient: 1 } })

  const noVersion = await postMcp(app, { jsonrpc: '2.0', id: 1, method: 'initialize', params: { capabilities: {} } })
  const noCapabilities = await postMcp(app, { jsonrpc: '2.0', id: 2, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: [] } })
  const ok = await postMcp(app, INIT)

  t.match(noVersion.json(), { id: 1, error: { code: -32602, message: /protocolVersion/ } })
  t.match(noCapabilities.json(), { id: 2, error: { code: -32602, message: /capabilities/ } })
  t.equal(noVersion.headers['mcp-session-id'], undefined)
  t.equal(ok.statusCode, 200, 'the failed attempts held no place in the client\'s session quota')
  t.ok(ok.headers['mcp-session-id'])
})
