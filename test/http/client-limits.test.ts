import t from 'tap'
import { createHash } from 'node:crypto'
import { buildTestApp } from '../helpers/build-app.js'
import { postMcp } from '../helpers/rpc.js'

// Per-client fairness and identity on the real app: sessions belong to the token that opened them, one
// client cannot take every session or every request slot, and clients behind a trusted proxy are told
// apart by their forwarded address.

const tokens = ['alice-token-0001', 'bob-token-00002']
const authTokens = tokens.map((token, i) => `${['alice', 'bob'][i]}:${createHash('sha256').update(token).digest('hex')}`)
const as = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` })
const INIT = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } } }
const LIST = { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} }

t.test('a session answers only the token that opened it; to another token it does not exist', async (t) => {
  const { app } = await buildTestApp(t, { config: { authTokens } })

  const init = await postMcp(app, INIT, as(tokens[0]))
  const session = init.headers['mcp-session-id'] as string
  const mine = await postMcp(app, LIST, { ...as(tokens[0]), 'mcp-session-id': session })
  const theirs = await postMcp(app, LIST, { ...as(tokens[1]), 'mcp-session-id': session })
  const deleteTheirs = await app.inject({ method: 'DELETE', url: '/mcp', headers: { ...as(tokens[1]), 'mcp-session-id': session } })
  const anonymous = await postMcp(app, LIST, { 'mcp-session-id': session })

  t.equal(init.statusCode, 200)
  t.equal(mine.statusCode, 200)
  t.equal(theirs.statusCode, 404)
  t.match(theirs.json(), { id: null, error: { code: -32001 } })
  t.equal(deleteTheirs.statusCode, 404, 'nor can another token end it')
  t.equal(anonymous.statusCode, 401)
  t.equal((await postMcp(app, LIST, { ...as(tokens[0]), 'mcp-session-id': session })).statusCode, 200, 'still alive for its owner')
})

t.test('one client reaching its session cap gets 429; other clients still get sessions', async (t) => {
  const { app } = await buildTestApp(t, { config: { authTokens, maxSessionsPerClient: 2 } })

  const first = await postMcp(app, INIT, as(tokens[0]))
  const second = await postMcp(app, INIT, as(tokens[0]))
  const third = await postMcp(app, INIT, as(tokens[0]))
  const other = await postMcp(app, INIT, as(tokens[1]))

  t.equal(first.statusCode, 200)
  t.equal(second.statusCode, 200)
  t.equal(third.statusCode, 429)
  t.match(third.json(), { jsonrpc: '2.0', id: null, error: { message: /Too many sessions for this client \(limit 2\)/ } })
  t.ok(Number(third.headers['retry-after']) >= 1, 'Retry-After')
  t.equal(other.statusCode, 200, 'bob is not locked out by alice')

  await app.inject({ method: 'DELETE', url: '/mcp', headers: { ...as(tokens[0]), 'mcp-session-id': first.headers['mcp-session-id'] as string } })
  t.equal((await postMcp(app, INIT, as(tokens[0]))).statusCode, 200, 'ending a session frees its place')
})

t.test('the per-client request rate is limited on /mcp only, initialize included, with a JSON-RPC 429', async (t) => {
  const { app } = await buildTestApp(t, { config: { authTokens, rateLimitPerMinute: 3, mode: 'stateless' } })

  const statuses = []
  for (let i = 0; i < 4; i++) statuses.push((await postMcp(app, INIT, as(tokens[0]))).statusCode)
  const limited = await postMcp(app, LIST, as(tokens[0]))
  const other = await postMcp(app, LIST, as(tokens[1]))
  const probe = await app.inject({ method: 'GET', url: '/healthz' })

  t.strictSame(statuses, [200, 200, 200, 429])
  t.equal(limited.statusCode, 429)
  t.match(limited.json(), { jsonrpc: '2.0', id: null, error: { message: /Too many requests from this client; retry in/ } })
  t.ok(limited.headers['retry-after'] !== undefined)
  t.equal(other.statusCode, 200, 'another token has its own budget')
  t.equal(probe.statusCode, 200, 'probes are never limited')
})

t.test('without auth, clients behind a trusted proxy are told apart by X-Forwarded-For; untrusted, it is ignored', async (t) => {
  const { app: trusting } = await buildTestApp(t, { config: { maxSessionsPerClient: 1, trustProxy: '127.0.0.1' } })
  const { app: plain } = await buildTestApp(t, { config: { maxSessionsPerClient: 1 } })
  const from = (ip: string): Record<string, string> => ({ 'x-forwarded-for': ip })

  const a = await postMcp(trusting, INIT, from('203.0.113.1'))
  const b = await postMcp(trusting, INIT, from('203.0.113.2'))
  const aAgain = await postMcp(trusting, INIT, from('203.0.113.1'))
  const spoof1 = await postMcp(plain, INIT, from('203.0.113.1'))
  const spoof2 = await postMcp(plain, INIT, from('203.0.113.2'))

  t.strictSame([a.statusCode, b.statusCode, aAgain.statusCode], [200, 200, 429])
  t.strictSame([spoof1.statusCode, spoof2.statusCode], [200, 429], 'a forged header does not make a new client')
})

t.test('with auth configured, /mcp needs a token and the well-known metadata is served for JWT setups', async (t) => {
  const { app } = await buildTestApp(t, { config: { authTokens } })
  const { app: jwtApp } = await buildTestApp(t, { config: { jwtIssuer: 'https://issuer.example.test', jwtJwksUrl: 'https://issuer.example.test/jwks', publicUrl: 'https://mcp.example.test/mcp' } })

  t.equal((await postMcp(app, INIT)).statusCode, 401)
  t.equal((await app.inject({ method: 'GET', url: '/healthz' })).statusCode, 200, 'probes need no token')
  const metadata = await jwtApp.inject({ method: 'GET', url: '/.well-known/oauth-protected-resource/mcp', headers: { host: 'localhost' } })
  t.match(metadata.json(), { resource: 'https://mcp.example.test/mcp', authorization_servers: ['https://issuer.example.test'] })
})

t.test('a call\'s log line carries the request id, the session and the principal, never the token', async (t) => {
  const { app, lines } = await buildTestApp(t, { config: { authTokens, callLogLevel: 'info', logLevel: 'info' } })
  const init = await postMcp(app, INIT, as(tokens[0]))
  const session = init.headers['mcp-session-id'] as string

  await postMcp(app, { jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'echo_text', arguments: { text: 'x' } } }, { ...as(tokens[0]), 'mcp-session-id': session })

  const line = lines.find(l => l.msg === 'tool call')
  t.match(line, { tool: 'echo_text', outcome: 'ok', durationMs: Number, reqId: String, session: session.slice(0, 8), principal: 'token:alice' })
  t.notOk(lines.some(l => JSON.stringify(l).includes(tokens[0])), 'the token is in no log line')
})
