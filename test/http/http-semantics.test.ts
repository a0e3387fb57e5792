import t from 'tap'
import { buildTestApp } from '../helpers/build-app.js'
import { CLIENT_HEADERS, openSession, postMcp } from '../helpers/rpc.js'

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

t.test('OPTIONS answers 204 with the methods the endpoint takes in each mode, a body or not (RFC 9110 §9.3.7)', async (t) => {
  const { app } = await buildTestApp(t)
  const { app: stateless } = await buildTestApp(t, { config: { mode: 'stateless' } })

  const bare = await app.inject({ method: 'OPTIONS', url: '/mcp' })
  const withBody = await app.inject({ method: 'OPTIONS', url: '/mcp', headers: { 'content-type': 'application/json' }, payload: '{"x":1}' })
  const statelessRes = await stateless.inject({ method: 'OPTIONS', url: '/mcp' })

  for (const res of [bare, withBody]) {
    t.equal(res.statusCode, 204)
    t.equal(res.headers.allow, 'GET, POST, DELETE, OPTIONS')
    t.equal(res.body, '')
    t.equal(res.headers['access-control-allow-origin'], undefined, 'no CORS: a browser on another origin stays refused')
  }
  t.equal(statelessRes.statusCode, 204)
  t.equal(statelessRes.headers.allow, 'POST, OPTIONS')
})

t.test('a JSON body in any charset but UTF-8 is refused 415 before it is read as a message; UTF-8 spellings pass', async (t) => {
  const { app } = await buildTestApp(t, { config: { mode: 'stateless' } })
  const ping = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' })
  const send = (contentType: string) => app.inject({ method: 'POST', url: '/mcp', headers: { ...CLIENT_HEADERS, 'content-type': contentType }, payload: ping })

  const refusedTypes = ['application/json; charset=utf-16', 'application/json;charset="UTF-16LE"', 'application/json; charset=iso-8859-1', 'application/json; foo=bar; charset=latin1']
  const servedTypes = ['application/json', 'application/json; charset=utf-8', 'application/json;charset="UTF-8"', 'application/json; charset=utf8', 'application/json; foo=bar']

  const refused = await Promise.all(refusedTypes.map(send))
  const served = await Promise.all(servedTypes.map(send))

  refused.forEach((res, i) => {
    t.equal(res.statusCode, 415, refusedTypes[i])
    t.match(res.json(), { jsonrpc: '2.0', id: null, error: { code: -32600, message: /^Unsupported Media Type: a JSON body is UTF-8/ } })
  })
  served.forEach((res, i) => t.equal(res.statusCode, 200, servedTypes[i]))
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
