import t from 'tap'
import { buildTestApp } from '../helpers/build-app.js'
import { openSession, postMcp } from '../helpers/rpc.js'

const RPC_SHAPE = { jsonrpc: '2.0', id: null, error: { code: Number, message: String } }

t.test('unparseable JSON answers 400 with -32700', async (t) => {
  const { app } = await buildTestApp(t)

  const res = await postMcp(app, '{"jsonrpc":"2.0",')
  const empty = await postMcp(app, '')

  t.equal(res.statusCode, 400)
  t.match(res.json(), { ...RPC_SHAPE, error: { code: -32700 } })
  t.equal(empty.statusCode, 400)
  t.match(empty.json(), { error: { code: -32700 } })
})

t.test('prototype-poisoned bodies are rejected', async (t) => {
  const { app } = await buildTestApp(t)
  const sid = await openSession(app)

  const proto = await postMcp(app, '{"jsonrpc":"2.0","id":1,"method":"ping","__proto__":{"polluted":true}}', { 'mcp-session-id': sid })
  const ctor = await postMcp(app, '{"jsonrpc":"2.0","id":1,"method":"ping","constructor":{"prototype":{"polluted":true}}}', { 'mcp-session-id': sid })

  t.equal(proto.statusCode, 400)
  t.match(proto.json(), { ...RPC_SHAPE, error: { code: -32700 } })
  t.equal(ctor.statusCode, 400)
  t.match(ctor.json(), { error: { code: -32700 } })
  t.equal(({} as Record<string, unknown>).polluted, undefined)
})

t.test('a body over bodyLimit answers 413 with a JSON-RPC body', async (t) => {
  const { app } = await buildTestApp(t, { config: { bodyLimit: 1024 } })

  const res = await postMcp(app, { jsonrpc: '2.0', id: 1, method: 'ping', params: { pad: 'x'.repeat(2048) } })

  t.equal(res.statusCode, 413)
  t.match(res.json(), { ...RPC_SHAPE, error: { code: -32600 } })
})

t.test('a wrong content type answers 415 with a JSON-RPC body', async (t) => {
  const { app } = await buildTestApp(t)

  const text = await app.inject({ method: 'POST', url: '/mcp', headers: { 'content-type': 'text/plain' }, payload: '{}' })
  const form = await app.inject({ method: 'POST', url: '/mcp', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: 'a=1' })

  t.equal(text.statusCode, 415)
  t.match(text.json(), RPC_SHAPE)
  t.equal(form.statusCode, 415)
})

t.test('an unknown route answers 404 with a JSON-RPC body', async (t) => {
  const { app } = await buildTestApp(t)

  const res = await app.inject({ method: 'GET', url: '/nope' })

  t.equal(res.statusCode, 404)
  t.match(res.headers['content-type'], /^application\/json/)
  t.match(res.json(), RPC_SHAPE)
})

t.test('an unexpected error answers 500 with a generic -32603 and is logged', async (t) => {
  const { app, lines } = await buildTestApp(t)
  app.get('/boom', async () => { throw new Error('secret detail /etc/passwd') })

  const res = await app.inject({ method: 'GET', url: '/boom' })

  t.equal(res.statusCode, 500)
  t.same(res.json(), { jsonrpc: '2.0', error: { code: -32603, message: 'Internal error' }, id: null })
  t.ok(lines.some(l => l.msg === 'request failed'))
})
