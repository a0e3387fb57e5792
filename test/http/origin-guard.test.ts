import t from 'tap'
import { request as httpRequest } from 'node:http'
import { buildTestApp } from '../helpers/build-app.js'
import { CLIENT_HEADERS } from '../helpers/rpc.js'
import { isLoopbackHost } from '../../src/http/origin-guard.js'

const PING = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' })
const RPC_SHAPE = { jsonrpc: '2.0', id: null, error: { code: Number, message: String } }

function post (app: Awaited<ReturnType<typeof buildTestApp>>['app'], headers: Record<string, string>) {
  return app.inject({ method: 'POST', url: '/mcp', headers: { ...CLIENT_HEADERS, ...headers }, payload: PING })
}

t.test('a foreign Origin answers 403 with a JSON-RPC body', async (t) => {
  const { app } = await buildTestApp(t)

  const res = await post(app, { origin: 'https://evil.example' })
  const nullOrigin = await post(app, { origin: 'null' })

  t.equal(res.statusCode, 403)
  t.match(res.json(), RPC_SHAPE)
  t.equal(nullOrigin.statusCode, 403)
})

t.test('loopback origins on any port pass on a loopback bind; no Origin passes', async (t) => {
  const { app } = await buildTestApp(t, { config: { mode: 'stateless' } })

  for (const origin of ['http://localhost:5173', 'http://127.0.0.1', 'https://[::1]:8443']) {
    t.equal((await post(app, { origin })).statusCode, 200, origin)
  }
  t.equal((await post(app, {})).statusCode, 200)
})

t.test('allowedOrigins extends the list; loopback origins are refused on a public bind', async (t) => {
  const { app } = await buildTestApp(t, { config: { mode: 'stateless', host: '0.0.0.0', insecureNoAuth: true, allowedHosts: ['mcp.example.com'], allowedOrigins: ['https://app.example.com'] } })

  const listed = await post(app, { origin: 'https://app.example.com', host: 'mcp.example.com' })
  const local = await post(app, { origin: 'http://localhost:3000', host: 'mcp.example.com' })

  t.equal(listed.statusCode, 200)
  t.equal(local.statusCode, 403)
})

t.test('a Host other than the loopback names answers 403 over a real socket (DNS rebinding)', async (t) => {
  const { app } = await buildTestApp(t, { config: { mode: 'stateless' } })
  await app.listen({ host: '127.0.0.1', port: 0 })
  const { port } = app.server.address() as { port: number }
  const send = (host: string, path = '/mcp') => new Promise<{ status: number, body: string }>((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, method: path === '/mcp' ? 'POST' : 'GET', headers: { ...CLIENT_HEADERS, host, connection: 'close' } }, (res) => {
      let body = ''
      res.on('data', (c) => { body += c })
      res.on('end', () => resolve({ status: res.statusCode!, body }))
    })
    req.on('error', reject)
    req.end(path === '/mcp' ? PING : undefined)
  })

  const evil = await send('evil.example:' + port)
  const ok = await Promise.all(['localhost', `127.0.0.1:${port}`, `[::1]:${port}`, 'LOCALHOST:1'].map(h => send(h)))
  const probe = await send('10.0.0.7:3000', '/healthz')

  t.equal(evil.status, 403)
  t.match(JSON.parse(evil.body), RPC_SHAPE)
  t.same(ok.map(r => r.status), [200, 200, 200, 200])
  t.equal(probe.status, 200, 'health probes are exempt: orchestrators send the pod IP as Host')
})

t.test('allowedHosts extends the Host list; "*" allows any', async (t) => {
  const listed = await buildTestApp(t, { config: { mode: 'stateless', allowedHosts: ['mcp.internal'] } })
  const any = await buildTestApp(t, { config: { mode: 'stateless', allowedHosts: ['*'] } })

  t.equal((await post(listed.app, { host: 'mcp.internal:8080' })).statusCode, 200)
  t.equal((await post(listed.app, { host: 'other.internal' })).statusCode, 403)
  t.equal((await post(any.app, { host: 'anything.example' })).statusCode, 200)
})

t.test('a non-loopback bind without allowedHosts is a boot error naming the setting', async (t) => {
  await t.rejects(buildTestApp(t, { config: { host: '0.0.0.0', insecureNoAuth: true } }), { code: 'APP_ERR_CONFIG_INVALID', message: /--allowed-hosts/ })
})

t.test('isLoopbackHost knows the loopback names', async (t) => {
  t.same(['127.0.0.1', '127.1.2.3', 'localhost', '::1', '[::1]', '0.0.0.0', '::', '10.0.0.1'].map(isLoopbackHost), [true, true, true, true, true, false, false, false])
})

t.test('the guard itself, over every spelling of Host and Origin a client can send', async (t) => {
  const { originGuard } = await import('../../src/http/origin-guard.js')
  // anyHost: the route's own config says it answers any Host and Origin (probes, metrics).
  const verdict = (guard: ReturnType<typeof originGuard>, headers: Record<string, string | undefined>, anyHost = false): string => {
    let out = 'pass'
    guard.call(undefined as never, { headers, routeOptions: { config: { anyHost } } } as never, undefined as never, (err?: Error) => { if (err !== undefined) out = err.message })
    return out
  }
  const local = originGuard({ host: '127.0.0.1' })

  t.equal(verdict(local, { host: '[::1]:3000' }), 'pass')
  t.equal(verdict(local, { host: 'localhost' }), 'pass', 'a Host without a port')
  t.match(verdict(local, { host: '[::1' }), /Host/, 'an unclosed IPv6 literal is not a loopback name')
  t.match(verdict(local, {}), /Host/, 'no Host header at all')
  t.equal(verdict(local, {}, true), 'pass', 'probes pass without a Host')
  t.equal(verdict(local, { host: 'localhost', origin: 'http://[::1]:5173' }), 'pass', 'an IPv6 loopback origin')
  t.match(verdict(local, { host: 'localhost', origin: 'file:///etc' }), /Origin/, 'only http(s) origins can be loopback ones')
  t.match(verdict(local, { host: 'localhost', origin: 'not a url' }), /Origin/)
  t.equal(verdict(local, { host: 'localhost', origin: 'https://evil.test' }, true), 'pass', 'probes pass a foreign Origin too')
  const long = `https://${'a'.repeat(300)}.test`
  t.match(verdict(local, { host: 'localhost', origin: long }), /^Origin 'https:\/\/a{92}…' is not allowed$/, 'a long Origin is clipped in the answer')

  const open = originGuard({ host: '0.0.0.0', allowedHosts: ['*'], allowedOrigins: ['*'] })
  t.equal(verdict(open, { host: 'anything.test', origin: 'https://anywhere.test' }), 'pass')
})
