import t, { type Test } from 'tap'
import { createHash } from 'node:crypto'
import http from 'node:http'
import Fastify from 'fastify'
import { exportJWK, exportSPKI, generateKeyPair, SignJWT } from 'jose'
import pino from 'pino'
import { Writable } from 'node:stream'
import rpcErrors from '../../src/http/rpc-errors.js'
import auth, { metadataUrl, resourceMetadata, type AuthOptions } from '../../src/http/auth.js'

// The resource-server checks on /mcp, over Fastify inject: static tokens by hash, JWTs by signature,
// issuer, audience, expiry and scope, and the RFC 9728 challenge and metadata.

const RESOURCE = 'https://mcp.example.test/mcp'
const ISSUER = 'https://issuer.example.test'
const TOKEN = 'static-token-0123456789'
const hash = (s: string): string => createHash('sha256').update(s).digest('hex')

const keys = await generateKeyPair('ES256', { extractable: true })
const otherKeys = await generateKeyPair('ES256', { extractable: true })
const jwk = { ...await exportJWK(keys.publicKey), kid: 'k1', alg: 'ES256', use: 'sig' }

async function token (claims: Record<string, unknown> = {}, options: { key?: typeof keys.privateKey, exp?: string | number, alg?: string } = {}): Promise<string> {
  const payload = { scope: 'workspace:read', iss: ISSUER, aud: RESOURCE, sub: 'alice', ...claims }
  return await new SignJWT(payload).setProtectedHeader({ alg: options.alg ?? 'ES256', kid: 'k1' })
    .setIssuedAt().setExpirationTime(options.exp ?? '5m').sign(options.key ?? keys.privateKey)
}

async function build (t: Test, options: Partial<AuthOptions>, logLines?: string[]) {
  const stream = new Writable({ write (chunk, _enc, cb) { logLines?.push(chunk.toString()); cb() } })
  const app = Fastify({ loggerInstance: pino({ level: 'trace' }, stream) })
  await app.register(rpcErrors)
  await app.register(resourceMetadata, { resource: RESOURCE, ...options })
  // The plugin guards the context it is registered in, as app.ts does with the endpoint's own.
  await app.register(async (endpoint) => {
    await endpoint.register(auth, { resource: RESOURCE, ...options })
    endpoint.post('/mcp', async (request) => ({ principal: request.principal }))
  })
  app.get('/open', async () => 'open')
  t.teardown(() => app.close())
  return app
}

const post = (app: Awaited<ReturnType<typeof build>>, authorization?: string, url = '/mcp') =>
  app.inject({ method: 'POST', url, headers: { 'content-type': 'application/json', ...(authorization === undefined ? {} : { authorization }) }, payload: '{}' })

t.test('static tokens: the right one passes as its name; a wrong, missing or query-string token is 401', async (t) => {
  const app = await build(t, { tokens: [{ name: 'ci', sha256: hash(TOKEN) }, { name: 'ops', sha256: hash('other-token') }] })

  const ok = await post(app, `Bearer ${TOKEN}`)
  const wrong = await post(app, 'Bearer not-the-token')
  const missing = await post(app)
  const inQuery = await post(app, undefined, `/mcp?access_token=${TOKEN}`)
  const basic = await post(app, 'Basic dXNlcjpwYXNz')

  t.equal(ok.statusCode, 200)
  t.same(ok.json(), { principal: { id: 'token:ci', kind: 'token' } })
  for (const res of [wrong, missing, inQuery, basic]) {
    t.equal(res.statusCode, 401)
    t.match(res.json(), { jsonrpc: '2.0', id: null, error: { code: -32000, message: /^Unauthorized: / } })
    t.match(res.headers['www-authenticate'], /^Bearer realm="workspace-mcp".*scope="workspace:read"/)
    t.notMatch(res.headers['www-authenticate'], /resource_metadata/, 'no authorization server, so no metadata to point at')
  }
  t.match(wrong.headers['www-authenticate'], /error="invalid_token"/)
  t.match(basic.headers['www-authenticate'], /error="invalid_request"/)
  t.match(missing.json().error.message, /^Unauthorized: a bearer token is required: send "Authorization: Bearer <token>" with a token the operator gave you \(this server has no OAuth authorization server, so client registration cannot get one\)$/, 'a client without one is told what to send, and that registration cannot help')
  t.equal((await app.inject({ method: 'GET', url: '/open' })).statusCode, 200, 'routes outside the guarded context are not guarded')
  t.equal((await app.inject({ method: 'GET', url: '/.well-known/oauth-protected-resource' })).statusCode, 404)
})

t.test('JWTs: signature, issuer, audience and expiry are checked; the principal is issuer and subject', async (t) => {
  const app = await build(t, { jwt: { issuer: ISSUER, jwks: { keys: [jwk] } } })
  const cases: Array<[string, string]> = [
    ['another key', await token({}, { key: otherKeys.privateKey })],
    ['another audience', await token({ aud: 'https://elsewhere.test/mcp' })],
    ['another issuer', await token({ iss: 'https://evil.test' })],
    ['expired beyond the skew', await token({}, { exp: Math.floor(Date.now() / 1000) - 120 })],
    ['unsigned (alg none)', `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from(JSON.stringify({ iss: ISSUER, aud: RESOURCE, sub: 'x', exp: 9e9, scope: 'workspace:read' })).toString('base64url')}.`]
  ]

  const ok = await post(app, `Bearer ${await token()}`)
  const skewed = await post(app, `Bearer ${await token({}, { exp: Math.floor(Date.now() / 1000) - 10 })}`)

  t.same(ok.json(), { principal: { id: `jwt:${ISSUER}#alice`, kind: 'jwt' } })
  t.equal(skewed.statusCode, 200, 'ten seconds past exp is within the clock skew')
  for (const [name, jwt] of cases) {
    const res = await post(app, `Bearer ${jwt}`)
    t.equal(res.statusCode, 401, name)
    t.match(res.headers['www-authenticate'], `resource_metadata="${metadataUrl(RESOURCE)}"`, `${name}: points at the metadata`)
  }
  t.match((await post(app, `Bearer ${cases[3][1]}`)).json().error.message, /expired/)
  t.equal((await post(app)).json().error.message, `Unauthorized: a bearer token is required: send "Authorization: Bearer <token>" with an access token from ${ISSUER} for ${RESOURCE} (metadata: ${metadataUrl(RESOURCE)})`, 'without a token: where to get one')
})

t.test('a valid token without the scope is 403 insufficient_scope naming it; scp arrays count', async (t) => {
  const app = await build(t, { jwt: { issuer: ISSUER, jwks: { keys: [jwk] } } })

  const none = await post(app, `Bearer ${await token({ scope: 'profile email' })}`)
  const scp = await post(app, `Bearer ${await token({ scope: undefined, scp: ['workspace:read'] })}`)
  const missing = await post(app, `Bearer ${await token({ scope: undefined })}`)

  t.equal(none.statusCode, 403)
  t.match(none.headers['www-authenticate'], /error="insufficient_scope"/)
  t.match(none.headers['www-authenticate'], /scope="workspace:read"/)
  t.match(none.json(), { error: { message: /workspace:read/ } })
  t.equal(scp.statusCode, 200)
  t.equal(missing.statusCode, 403, 'no scope claim at all')
})

t.test('protected-resource metadata at the root and path-inserted well-known URLs (RFC 9728)', async (t) => {
  const app = await build(t, { jwt: { issuer: ISSUER, jwks: { keys: [jwk] } } })

  const root = await app.inject({ method: 'GET', url: '/.well-known/oauth-protected-resource' })
  const inserted = await app.inject({ method: 'GET', url: '/.well-known/oauth-protected-resource/mcp' })

  t.equal(metadataUrl(RESOURCE), 'https://mcp.example.test/.well-known/oauth-protected-resource/mcp')
  t.equal(metadataUrl('https://mcp.example.test'), 'https://mcp.example.test/.well-known/oauth-protected-resource', 'an endpoint at the root')
  t.same(root.json(), { resource: RESOURCE, authorization_servers: [ISSUER], scopes_supported: ['workspace:read'], bearer_methods_supported: ['header'], resource_name: 'workspace-mcp' })
  t.equal(inserted.body, root.body)
})

t.test('keys from a JWKS URL or a PEM public key', async (t) => {
  const server = http.createServer((_req, res) => { res.setHeader('content-type', 'application/json'); res.end(JSON.stringify({ keys: [jwk] })) })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => server.close())
  const { port } = server.address() as { port: number }
  const remote = await build(t, { jwt: { issuer: ISSUER, jwksUrl: `http://127.0.0.1:${port}/jwks.json` } })
  const pem = await build(t, { jwt: { issuer: ISSUER, publicKeyPem: await exportSPKI(keys.publicKey), algorithms: ['ES256'] } })

  t.equal((await post(remote, `Bearer ${await token()}`)).statusCode, 200)
  t.equal((await post(pem, `Bearer ${await token()}`)).statusCode, 200)
  t.equal((await post(pem, `Bearer ${await token({}, { key: otherKeys.privateKey })}`)).statusCode, 401)
})

t.test('with both kinds configured a JWT-shaped token is verified as a JWT, anything else as a static token', async (t) => {
  const app = await build(t, { tokens: [{ name: 'ci', sha256: hash(TOKEN) }], jwt: { issuer: ISSUER, jwks: { keys: [jwk] } } })

  t.same((await post(app, `Bearer ${TOKEN}`)).json(), { principal: { id: 'token:ci', kind: 'token' } })
  t.same((await post(app, `Bearer ${await token()}`)).json(), { principal: { id: `jwt:${ISSUER}#alice`, kind: 'jwt' } })
})

t.test('a presented token never reaches the log, passing or failing', async (t) => {
  const lines: string[] = []
  const app = await build(t, { tokens: [{ name: 'ci', sha256: hash(TOKEN) }], jwt: { issuer: ISSUER, jwks: { keys: [jwk] } } }, lines)
  const jwt = await token({ scope: 'nothing' })

  await post(app, `Bearer ${TOKEN}`)
  await post(app, 'Bearer wrong-secret-value')
  await post(app, `Bearer ${jwt}`)

  t.ok(lines.length > 0, 'there were log lines')
  for (const secret of [TOKEN, 'wrong-secret-value', jwt]) t.notOk(lines.some(l => l.includes(secret)), `${secret.slice(0, 8)}… is not logged`)
})

t.test('misconfiguration stops the boot with a message saying what to set', async (t) => {
  await t.rejects(build(t, {}), { code: 'APP_ERR_CONFIG_INVALID', message: /static tokens or a JWT issuer/ })
  await t.rejects(build(t, { tokens: [{ name: 'x', sha256: 'not-hex' }] }), { code: 'APP_ERR_CONFIG_INVALID', message: /sha256sum/ })
  await t.rejects(build(t, { jwt: { issuer: ISSUER } }), { code: 'APP_ERR_CONFIG_INVALID', message: /JWKS URL, a JWKS or a PEM/ })
  await t.rejects(build(t, { jwt: { issuer: ISSUER, publicKeyPem: await exportSPKI(keys.publicKey) } }), { code: 'APP_ERR_CONFIG_INVALID', message: /needs its algorithm/ })
})

t.test('a rejected token\'s reason is logged at debug — what was wrong with it, never the token', async (t) => {
  const lines: string[] = []
  const app = await build(t, { tokens: [{ name: 'ci', sha256: hash(TOKEN) }], jwt: { issuer: ISSUER, jwks: { keys: [jwk] } } }, lines)
  // A key of another type than the token's algorithm: jose refuses it with a TypeError, logged by name.
  const pem = await build(t, { jwt: { issuer: ISSUER, publicKeyPem: await exportSPKI(keys.publicKey), algorithms: ['ES256', 'RS256'] } }, lines)
  const rsa = await generateKeyPair('RS256')
  const cases: Array<{ authorization?: string, logged: Record<string, unknown>, server?: typeof app }> = [
    { logged: { reason: 'no Authorization header' } },
    { authorization: 'Basic dXNlcjpwYXNz', logged: { reason: 'the Authorization header is not "Bearer <token>"' } },
    { authorization: 'Bearer wrong-secret-value', logged: { kind: 'static', reason: 'no configured token has this SHA-256' } },
    { authorization: `Bearer ${await token({}, { exp: Math.floor(Date.now() / 1000) - 120 })}`, logged: { kind: 'jwt', code: 'ERR_JWT_EXPIRED', claim: 'exp', kid: 'k1', alg: 'ES256' } },
    { authorization: `Bearer ${await token({ aud: 'https://elsewhere.test/mcp' })}`, logged: { kind: 'jwt', code: 'ERR_JWT_CLAIM_VALIDATION_FAILED', claim: 'aud' } },
    { authorization: `Bearer ${await token({}, { key: otherKeys.privateKey })}`, logged: { kind: 'jwt', code: 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED' } },
    { authorization: `Bearer ${await new SignJWT({ scope: 'workspace:read', iss: ISSUER, aud: RESOURCE, sub: 'a' }).setProtectedHeader({ alg: 'ES256', kid: 'unknown' }).setExpirationTime('5m').sign(keys.privateKey)}`, logged: { kind: 'jwt', code: 'ERR_JWKS_NO_MATCHING_KEY', kid: 'unknown' } },
    { authorization: 'Bearer not.a.jwt-header', logged: { kind: 'jwt', code: 'ERR_JWS_INVALID' } },
    { authorization: `Bearer ${await token({ scope: 'profile' })}`, logged: { kind: 'jwt', principal: `jwt:${ISSUER}#alice`, reason: 'the token lacks the workspace:read scope' } },
    { authorization: `Bearer ${await token({}, { key: rsa.privateKey, alg: 'RS256' })}`, logged: { kind: 'jwt', reason: 'TypeError', alg: 'RS256' }, server: pem }
  ]

  for (const { authorization, server = app } of cases) await post(server, authorization)
  const rejected = lines.map(l => JSON.parse(l) as Record<string, unknown>).filter(l => l.msg === 'token rejected')

  t.equal(rejected.length, cases.length, 'one line per refused request')
  cases.forEach(({ logged }, i) => t.match(rejected[i], { level: 20, reqId: String, ...logged }))
  for (const { authorization } of cases) {
    const secret = authorization?.split(' ')[1]
    if (secret !== undefined) t.notOk(lines.some(l => l.includes(secret)), `${secret.slice(0, 12)}… is not logged`)
  }
})
