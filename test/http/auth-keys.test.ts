import t, { type Test } from 'tap'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import Fastify from 'fastify'
import { exportJWK, generateKeyPair, SignJWT } from 'jose'
import rpcErrors from '../../src/http/rpc-errors.js'
import auth, { type JwtOptions } from '../../src/http/auth.js'
import { createDegradations } from '../../src/services/degradations.js'
import { buildTestApp } from '../helpers/build-app.js'
import { captureLogger } from '../helpers/engine.js'

// An issuer whose JWKS endpoint stops answering: a valid JWT is then neither good nor bad, so it gets 503 with
// Retry-After (not 401, which would send its client for a token it does not need), the outage is logged once
// through the degradation register, nothing hammers the issuer meanwhile, and tokens that are bad on their
// face stay 401. Real sockets: the key set is served by an HTTP server on 127.0.0.1 that the test breaks.

const RESOURCE = 'https://mcp.example.test/mcp'
const ISSUER = 'https://issuer.example.test'
const keys = await generateKeyPair('ES256', { extractable: true })
const jwk = { ...await exportJWK(keys.publicKey), kid: 'k1', alg: 'ES256', use: 'sig' }
// A second key of the same type: a token that names no kid then matches two.
const jwk2 = { ...await exportJWK((await generateKeyPair('ES256', { extractable: true })).publicKey), kid: 'k2', alg: 'ES256', use: 'sig' }

async function token (options: { kid?: string | null, exp?: number } = {}): Promise<string> {
  const kid = options.kid === null ? {} : { kid: options.kid ?? 'k1' }
  return await new SignJWT({ scope: 'workspace:read', iss: ISSUER, aud: RESOURCE, sub: 'alice' })
    .setProtectedHeader({ alg: 'ES256', ...kid }).setIssuedAt().setExpirationTime(options.exp ?? '5m').sign(keys.privateKey)
}
const unsigned = `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from(JSON.stringify({ iss: ISSUER, aud: RESOURCE, sub: 'x', exp: 9e9, scope: 'workspace:read' })).toString('base64url')}.`

/** A JWKS endpoint the test breaks: `ok` serves the key set, `reset` drops the connection, `error` answers 500. */
async function issuer (t: Test) {
  const state = { mode: 'ok' as 'ok' | 'reset' | 'error', fetches: 0 }
  const server = http.createServer((req, res) => {
    state.fetches++
    if (state.mode === 'reset') return req.socket.destroy()
    if (state.mode === 'error') return res.writeHead(500).end('down for maintenance')
    res.setHeader('content-type', 'application/json')
    res.end(JSON.stringify({ keys: [jwk, jwk2] }))
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise(resolve => server.close(resolve)))
  return { state, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks.json` }
}

async function build (t: Test, jwksUrl: string, jwt: Partial<JwtOptions> = {}) {
  const { log, lines } = captureLogger()
  const degradations = createDegradations(log)
  const app = Fastify({ loggerInstance: log })
  await app.register(rpcErrors)
  await app.register(async (endpoint) => {
    await endpoint.register(auth, { resource: RESOURCE, jwt: { issuer: ISSUER, jwksUrl, ...jwt }, degradations })
    endpoint.post('/mcp', async (request) => ({ principal: request.principal }))
  })
  t.teardown(() => app.close())
  const post = (bearer: string) => app.inject({ method: 'POST', url: '/mcp', headers: { 'content-type': 'application/json', authorization: `Bearer ${bearer}` }, payload: '{}' })
  return { post, degradations, lines }
}

t.test('an unreachable key set: a valid JWT gets 503 + Retry-After, the outage is logged once with its cause; bad tokens stay 401; it recovers when the set answers', async (t) => {
  const jwks = await issuer(t)
  const { post, degradations, lines } = await build(t, jwks.url, { jwksRetryMs: 0 })
  jwks.state.mode = 'reset'

  const valid = await post(await token())
  const again = await post(await token())
  const unknownKid = await post(await token({ kid: 'rotated' }))
  const unsignedToken = await post(unsigned)
  const notAJwt = await post('just-a-string')
  const during = degradations.current()
  jwks.state.mode = 'ok'
  const back = await post(await token())
  const unknownAfter = await post(await token({ kid: 'rotated' }))

  t.equal(valid.statusCode, 503, 'not 401: the token may be good')
  t.match(valid.headers['retry-after'], /^\d+$/)
  t.match(valid.json(), { jsonrpc: '2.0', id: null, error: { code: -32000, message: /signing keys cannot be fetched/ } })
  t.notOk(valid.headers['www-authenticate'], 'no challenge: a new token would not help')
  t.equal(again.statusCode, 503)
  t.equal(unknownKid.statusCode, 503, 'a kid nobody can check yet is not refused either')
  t.equal(unsignedToken.statusCode, 401, 'alg none is refused on its face')
  t.equal(notAJwt.statusCode, 401, 'so is a token that is not a JWT')
  t.match(during, [{ component: 'auth-keys', reason: new RegExp(`key set at ${jwks.url} cannot be fetched`), count: 3 }])
  const warned = lines.filter(l => l.msg === `degraded: auth-keys: ${during[0].reason}`)
  t.equal(warned.length, 1, 'one warn line for the outage, not one per request')
  t.match(warned[0], { level: 40, err: { message: /fetch failed/ } }, 'with the cause')
  t.equal(back.statusCode, 200, 'served again once the key set answers')
  t.equal(unknownAfter.statusCode, 401, 'and a kid the fresh set does not list is refused')
  t.same(degradations.current(), [])
  t.ok(lines.some(l => l.msg === 'recovered: auth-keys' && l.level === 30))
})

t.test('during an outage nothing is fetched until the retry: unknown kids cannot make each request a fetch of the issuer; keys the last set listed keep verifying', async (t) => {
  const jwks = await issuer(t)
  const { post } = await build(t, jwks.url, { jwksRetryMs: 60_000, jwksCooldownMs: 0 })
  const first = await post(await token())
  const fetchedWhileUp = jwks.state.fetches
  jwks.state.mode = 'error'

  const unknown = []
  for (let i = 0; i < 5; i++) unknown.push(await post(await token({ kid: `bogus-${i}` })))
  const known = await post(await token())
  const expired = await post(await token({ exp: Math.floor(Date.now() / 1000) - 3600 }))
  const noKid = await post(await token({ kid: null }))

  t.equal(first.statusCode, 200)
  t.strictSame(unknown.map(r => r.statusCode), [503, 503, 503, 503, 503])
  t.equal(jwks.state.fetches, fetchedWhileUp + 1, 'one failed fetch (a 500), then none for the rest')
  t.ok(Number(unknown[4].headers['retry-after']) > 50, 'Retry-After says when the next fetch is tried')
  t.equal(known.statusCode, 200, 'a key the last set listed still verifies')
  t.equal(expired.statusCode, 401, 'and a token it can check is refused as before')
  t.equal(noKid.statusCode, 401, 'as is one that names no key where the set holds two')
})

t.test('a key set that never loaded: every JWT gets 503 at once until the retry, without a fetch each', async (t) => {
  const jwks = await issuer(t)
  jwks.state.mode = 'error'
  const { post } = await build(t, jwks.url, { jwksRetryMs: 60_000 })

  const answers = [await post(await token()), await post(await token()), await post(await token({ kid: 'k2' }))]

  t.strictSame(answers.map(r => r.statusCode), [503, 503, 503])
  t.equal(jwks.state.fetches, 1)
})

t.test('the served app: a JWKS outage is listed by /readyz (still 200) and gauged by /metrics as auth-keys', async (t) => {
  const jwks = await issuer(t)
  jwks.state.mode = 'reset'
  const { app } = await buildTestApp(t, { config: { jwtIssuer: ISSUER, jwtJwksUrl: jwks.url, publicUrl: RESOURCE, mode: 'stateless' } })

  const res = await app.inject({ method: 'POST', url: '/mcp', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${await token()}` }, payload: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }) })
  const ready = await app.inject({ method: 'GET', url: '/readyz' })
  const metrics = (await app.inject({ method: 'GET', url: '/metrics' })).body

  t.equal(res.statusCode, 503)
  t.equal(ready.statusCode, 200)
  t.match(ready.json().degraded, [/^auth-keys: the key set at .* cannot be fetched/])
  t.match(metrics, /^mcp_degraded\{component="auth-keys"\} 1$/m)
})
