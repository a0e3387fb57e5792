import t, { type Test } from 'tap'
import fc from 'fast-check'
import { createHash } from 'node:crypto'
import fs from 'node:fs'
import type { IncomingMessage } from 'node:http'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { exportSPKI, generateKeyPair, SignJWT } from 'jose'
import { runs } from '../helpers/property.js'
import { buildTestApp } from '../helpers/build-app.js'
import { requestTargetProblem, toOriginForm } from '../../src/http/request-target.js'

// Auth, the per-client limit and the Host/Origin guard decide by the route a request reaches, never by
// how its path is spelled (issue 34: `/%6Dcp`, `/mcp#x` and `POST http://host/mcp` skipped auth and the
// limit). For every route and method the server has, arbitrary spellings of its path — percent-escapes
// of any byte in either hex case, ;params, ?query, #fragment, doubled and dot segments, trailing slashes,
// case changes, absolute form — are sent over raw sockets to a server with all four checks on, in both
// modes and with both kinds of token, and the answers are judged by what the route must refuse.

const hash = (s: string): string => createHash('sha256').update(s).digest('hex')
const LIMIT = 5
const INIT = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'spelling', version: '1' } } })

type Kind = 'endpoint' | 'metadata' | 'probe'
interface Route { method: string, path: string, kind: Kind }
const ROUTES: Route[] = [
  { method: 'POST', path: '/mcp', kind: 'endpoint' },
  { method: 'GET', path: '/mcp', kind: 'endpoint' },
  { method: 'DELETE', path: '/mcp', kind: 'endpoint' },
  { method: 'OPTIONS', path: '/mcp', kind: 'endpoint' },
  { method: 'GET', path: '/.well-known/oauth-protected-resource', kind: 'metadata' },
  { method: 'GET', path: '/.well-known/oauth-protected-resource/mcp', kind: 'metadata' },
  { method: 'GET', path: '/healthz', kind: 'probe' },
  { method: 'GET', path: '/readyz', kind: 'probe' },
  { method: 'GET', path: '/metrics', kind: 'probe' }
]

/** One spelling of a route's path: the edits applied (each absent most of the time), in the order listed. */
interface Spelling {
  escapes?: boolean[] | 'all'
  upperHex?: boolean
  upperCase?: number
  params?: string
  doubled?: number
  dot?: string
  trailing?: boolean
  query?: string
  fragment?: string
  absolute?: string
}

/** `arb` one time in four, otherwise absent: most spellings differ from the route in one or two ways. */
const rarely = <T>(arb: fc.Arbitrary<T>): fc.Arbitrary<T | undefined> =>
  fc.oneof({ weight: 3, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: arb })

const spelling: fc.Arbitrary<Spelling> = fc.record({
  escapes: rarely(fc.oneof(fc.array(fc.boolean(), { maxLength: 48 }), fc.constant<'all'>('all'))),
  upperHex: fc.boolean(),
  upperCase: rarely(fc.integer({ min: 0, max: 40 })),
  params: rarely(fc.constantFrom(';', ';a=b', ';jsessionid=1')),
  doubled: rarely(fc.integer({ min: 0, max: 6 })),
  dot: rarely(fc.constantFrom('/.', '/x/..', '/%2e', '/%2E%2e', '/.%2E')),
  trailing: rarely(fc.constant(true)),
  query: rarely(fc.constantFrom('?', '?x=1', '?access_token=t', '?/mcp', '?%2F')),
  fragment: rarely(fc.constantFrom('#', '#x', '#/healthz')),
  absolute: rarely(fc.constantFrom('http', 'https', 'HTTP'))
})

/** Applies a spelling to `route`, with `authority` for the absolute form. */
function spell (route: string, s: Spelling, authority: string): string {
  let out = ''
  for (let i = 0; i < route.length; i++) {
    const ch = route[i]
    if (ch !== '/' && (s.escapes === 'all' || s.escapes?.[i] === true)) {
      const hex = ch.charCodeAt(0).toString(16).padStart(2, '0')
      out += '%' + (s.upperHex === true ? hex.toUpperCase() : hex)
    } else {
      out += i === s.upperCase ? ch.toUpperCase() : ch
    }
  }
  if (s.doubled !== undefined) out = out.split('/').map((seg, i) => i === s.doubled ? `${seg}/` : seg).join('/')
  if (s.dot !== undefined) out = `${out.slice(0, out.lastIndexOf('/'))}${s.dot}${out.slice(out.lastIndexOf('/'))}`
  const target = `${out}${s.params ?? ''}${s.trailing === true ? '/' : ''}${s.query ?? ''}${s.fragment ?? ''}`
  return s.absolute === undefined ? target : `${s.absolute}://${authority}${target}`
}

interface Answer { status: number, head: string }

/** Sends one request over a fresh TCP connection, exactly as written, and reads its status line. */
async function send (port: number, method: string, target: string, headers: Record<string, string>): Promise<Answer> {
  const body = method === 'POST' ? INIT : ''
  const lines = [`${method} ${target} HTTP/1.1`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
    'content-type: application/json', 'accept: application/json, text/event-stream', `content-length: ${Buffer.byteLength(body)}`, 'connection: close']
  return await new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1')
    let text = ''
    socket.setEncoding('latin1')
    socket.on('data', (chunk: string) => {
      text += chunk
      // A GET stream that is served stays open: its head is all this test needs.
      if (/^HTTP\/1\.1 2/.test(text) && text.includes('\r\n\r\n')) socket.destroy()
    })
    socket.on('close', () => resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0), head: text.split('\r\n')[0] }))
    socket.on('error', reject)
    socket.write(`${lines.join('\r\n')}\r\n\r\n${body}`)
  })
}

const ok = (a: Answer): boolean => a.status >= 200 && a.status < 300

const ES256 = await generateKeyPair('ES256', { extractable: true })
const pemDir = fs.mkdtempSync(path.join(os.tmpdir(), 'wmcp-spell-'))
t.teardown(() => fs.rmSync(pemDir, { recursive: true, force: true }))
const pemFile = path.join(pemDir, 'issuer.pem')
fs.writeFileSync(pemFile, await exportSPKI(ES256.publicKey))
const ISSUER = 'https://issuer.example.test'
const PUBLIC_URL = 'http://127.0.0.1:3000/mcp'

/** A server with Host, Origin, auth (static tokens or JWT) and the per-client limit all on. */
async function serve (t: Test, mode: 'stateful' | 'stateless', auth: 'static' | 'jwt') {
  const names = ['spent', 'foreign', ...Array.from({ length: 40 }, (_, i) => `fresh${i}`)]
  const config = {
    mode,
    rateLimitPerMinute: LIMIT,
    allowedOrigins: ['https://app.example.test'],
    ...(auth === 'static'
      ? { authTokens: names.map(name => `${name}:${hash(`token-${name}`)}`) }
      : { jwtIssuer: ISSUER, publicUrl: PUBLIC_URL, jwtPublicKeyFile: pemFile, jwtAlgorithms: ['ES256'] })
  }
  const { app } = await buildTestApp(t, { config })
  await app.listen({ host: '127.0.0.1', port: 0 })
  const port = (app.server.address() as net.AddressInfo).port
  const token = async (name: string): Promise<string> => auth === 'static'
    ? `token-${name}`
    : await new SignJWT({ scope: 'workspace:read' }).setProtectedHeader({ alg: 'ES256' }).setIssuer(ISSUER)
      .setAudience(PUBLIC_URL).setSubject(name).setIssuedAt().setExpirationTime('10m').sign(ES256.privateKey)
  return { port, token, host: `127.0.0.1:${port}` }
}

for (const mode of ['stateful', 'stateless'] as const) {
  for (const authKind of ['static', 'jwt'] as const) {
    t.test(`${mode}, ${authKind} tokens: no spelling of any route gets past auth, the limit or the Host/Origin guard`, async (t) => {
      const { port, token, host } = await serve(t, mode, authKind)
      const spent = `Bearer ${await token('spent')}`
      const foreign = `Bearer ${await token('foreign')}`
      for (let i = 0; i < LIMIT; i++) await send(port, 'POST', '/mcp', { host, authorization: spent })
      t.equal((await send(port, 'POST', '/mcp', { host, authorization: spent })).status, 429, 'the spent client is at its limit')
      // Controls: the checks refuse by route, not by refusing every unusual spelling — an equivalent
      // spelling with a fresh token is served, one without a token is not.
      const control = `Bearer ${await token('fresh0')}`
      t.equal((await send(port, 'POST', '/%6Dcp', { host, authorization: control })).status, 200, '/%6Dcp is the endpoint, and is served with a token')
      t.equal((await send(port, 'POST', `http://${host}/mcp`, { host, authorization: control })).status, 200, 'absolute form is served with a token')
      t.equal((await send(port, 'POST', '/%6dcp', { host })).status, 401, 'the issue\'s spelling answers 401')

      const seen = new Map<string, Set<number>>()
      await fc.assert(fc.asyncProperty(fc.constantFrom(...ROUTES), spelling, fc.constantFrom('host', 'origin', 'authority'), async (route, s, foreignBy) => {
        const target = spell(route.path, s, host)
        const anonymous = await send(port, route.method, target, { host })
        const limited = await send(port, route.method, target, { host, authorization: spent })
        // A foreign name as Host, as Origin, or as the absolute form's authority (which replaces Host, RFC 9112 §3.2.2).
        const evilTarget = spell(route.path, foreignBy === 'authority' && s.absolute === undefined ? { ...s, absolute: 'http' } : s, foreignBy === 'origin' ? host : 'evil.example')
        const evil = await send(port, route.method, evilTarget, {
          host: foreignBy === 'host' ? 'evil.example' : host,
          ...(foreignBy === 'origin' ? { origin: 'https://evil.example' } : {}),
          authorization: foreign
        })
        const key = `${route.method} ${route.kind}`
        const statuses = seen.get(key) ?? new Set()
        for (const a of [anonymous, limited, evil]) statuses.add(a.status)
        seen.set(key, statuses)
        if (route.kind === 'endpoint' && (ok(anonymous) || ok(limited))) return false
        if (route.kind !== 'probe' && ok(evil)) return false
        // Nothing is answered by a crash, whatever the spelling.
        return [anonymous, limited, evil].every(a => a.status >= 200 && a.status < 500)
      }), {
        ...runs(150),
        // Spellings the router takes, always among the runs: the checks below must not hang on what the draw held.
        examples: [
          [ROUTES[0], { upperHex: false }, 'host'],
          [ROUTES[0], { upperHex: true, escapes: 'all' }, 'origin'],
          [ROUTES[0], { upperHex: false, query: '?x=1' }, 'authority'],
          [ROUTES[6], { upperHex: false }, 'host']
        ]
      })

      t.equal((await send(port, 'POST', '/mcp', { host, authorization: spent })).status, 429, 'still limited: no spelling reset or bypassed the count')
      // Not vacuous: the spellings reached the checks themselves, not only the request-target refusal.
      t.ok(seen.get('POST endpoint')?.has(401), 'some spellings reached auth')
      t.ok(seen.get('POST endpoint')?.has(429), 'some spellings reached the limit')
      t.ok(seen.get('POST endpoint')?.has(403), 'some spellings reached the Host/Origin guard')
      t.ok(seen.get('GET probe')?.has(200), 'some spellings of the probes were served')
      t.comment(`statuses seen: ${[...seen].map(([k, v]) => `${k} ${[...v].sort().join('/')}`).join('; ')}`)
    })
  }
}

t.test('what the request-target check refuses, and what it lets the router see', async (t) => {
  const refused = ['/mcp#x', '/mcp#', '*', 'mcp', '/./mcp', '/x/../mcp', '/%2e/mcp', '/%2E%2e/mcp', '/.%2e/mcp', '/%2Fmcp', '/m%2fcp',
    '/%5Cmcp', '/mcp%00', '/mcp%1f', '/mcp%7F', '/%zz', '/%', '/%e9', '/mcp space', '/mcp\u00e9', '/mcp"', '/mcp<x>', '/mcp?a#b', '/mcp?{}']
  const allowed = ['/', '/mcp', '/%6Dcp', '/%6dcp', '/mcp;a=b', '//mcp', '/mcp/', '/MCP', '/mcp?x=1&y=/z?', '/%C3%A9', '/a:b@c', "/!$&'()*+,;=", '/mcp?']

  for (const target of refused) t.type(requestTargetProblem(target), 'string', target)
  for (const target of allowed) t.equal(requestTargetProblem(target), undefined, target)
})

t.test('absolute form becomes origin form, and its authority the Host judged; anything else is left as it came', async (t) => {
  const as = (url: string | undefined, host = 'client.example') => {
    const req = { url, headers: { host } } as unknown as IncomingMessage
    return { url: toOriginForm(req), host: req.headers.host }
  }

  t.strictSame(as('http://127.0.0.1:3000/mcp?x=1'), { url: '/mcp?x=1', host: '127.0.0.1:3000' })
  t.strictSame(as('HTTPS://a.example'), { url: '/', host: 'a.example' }, 'no path is the root')
  t.strictSame(as('http://a.example?x'), { url: '/?x', host: 'a.example' }, 'a query without a path')
  t.strictSame(as('/mcp'), { url: '/mcp', host: 'client.example' })
  t.strictSame(as('http://user@a.example/mcp'), { url: 'http://user@a.example/mcp', host: 'client.example' }, 'userinfo: left for the check to refuse')
  t.strictSame(as('ftp://a.example/mcp'), { url: 'ftp://a.example/mcp', host: 'client.example' })
  t.strictSame(as(undefined), { url: '', host: 'client.example' })
})
