import t from 'tap'
import { loadConfig } from '../src/base/config.js'
import { authOptionsOf, checkExposure, trustProxyOf } from '../src/http-options.js'

// The config → HTTP plugin options mapping, and the boot refusals it owns.

const config = (values: Record<string, string>) => loadConfig(values, {}, '/tmp')
const SHA = 'a'.repeat(64)

t.test('no auth settings, no auth; tokens are name:sha256 entries', async (t) => {
  t.equal(authOptionsOf(config({})), undefined)
  t.match(authOptionsOf(config({ authTokens: `ci:${SHA.toUpperCase()},ops:team:${SHA}` })), {
    resource: 'http://127.0.0.1:3000/mcp',
    tokens: [{ name: 'ci', sha256: SHA }, { name: 'ops:team', sha256: SHA }],
    scope: 'workspace:read'
  })
  t.throws(() => authOptionsOf(config({ authTokens: 'just-a-token' })), { code: 'APP_ERR_CONFIG_INVALID', message: /--auth-tokens \/ WORKSPACE_MCP_AUTH_TOKENS.*not name:sha256/ })
})

t.test('a JWT issuer needs the public URL (the audience), and a key source that can be read', async (t) => {
  const dir = t.testdir({ 'key.pem': '-----BEGIN PUBLIC KEY-----\nx\n-----END PUBLIC KEY-----\n' })

  t.throws(() => authOptionsOf(config({ jwtIssuer: 'https://id.test' })), { code: 'APP_ERR_CONFIG_INVALID', message: /--public-url \/ WORKSPACE_MCP_PUBLIC_URL: required with --jwt-issuer.*audience/ })
  t.match(authOptionsOf(config({ jwtIssuer: 'https://id.test', publicUrl: 'https://mcp.test/mcp', jwtJwksUrl: 'https://id.test/jwks', jwtAlgorithms: 'ES256' })), {
    resource: 'https://mcp.test/mcp', jwt: { issuer: 'https://id.test', jwksUrl: 'https://id.test/jwks', algorithms: ['ES256'] }
  })
  t.match(authOptionsOf(config({ jwtIssuer: 'https://id.test', publicUrl: 'https://mcp.test/mcp', jwtPublicKeyFile: `${dir}/key.pem` })), { jwt: { publicKeyPem: /BEGIN PUBLIC KEY/, jwksUrl: undefined, algorithms: undefined } })
  t.throws(() => authOptionsOf(config({ jwtIssuer: 'https://id.test', publicUrl: 'https://mcp.test/mcp', jwtPublicKeyFile: `${dir}/none.pem` })), { code: 'APP_ERR_CONFIG_INVALID', message: /--jwt-public-key-file.*ENOENT/ })
})

t.test('trustProxy: off, on, a hop count or a list of proxies', async (t) => {
  t.equal(trustProxyOf(config({})), false)
  t.equal(trustProxyOf(config({ trustProxy: 'false' })), false)
  t.equal(trustProxyOf(config({ trustProxy: 'true' })), true)
  t.equal(trustProxyOf(config({ trustProxy: '2' })), 2)
  t.strictSame(trustProxyOf(config({ trustProxy: '10.0.0.0/8, 127.0.0.1' })), ['10.0.0.0/8', '127.0.0.1'])
})

t.test('exposure: a public bind needs auth (or the explicit insecure flag) and allowedHosts, both said at once; loopback needs neither', async (t) => {
  const auth = authOptionsOf(config({ authTokens: `ci:${SHA}` }))
  const hosts = { host: '0.0.0.0', allowedHosts: 'mcp.example.com' }

  t.doesNotThrow(() => checkExposure(config({}), undefined, true))
  t.doesNotThrow(() => checkExposure(config(hosts), auth, false))
  t.doesNotThrow(() => checkExposure(config({ ...hosts, insecureNoAuth: 'true' }), undefined, false))
  t.throws(() => checkExposure(config(hosts), undefined, false), { code: 'APP_ERR_CONFIG_INVALID', message: /'0\.0\.0\.0' is reachable from other machines, so every request must be authenticated: set WORKSPACE_MCP_AUTH_TOKENS.*--insecure-no-auth to serve without authentication$/ })
  t.throws(() => checkExposure(config({ host: '0.0.0.0', insecureNoAuth: 'true' }), undefined, false), { message: /so --allowed-hosts \/ WORKSPACE_MCP_ALLOWED_HOSTS must list/ })
  t.throws(() => checkExposure(config({ host: '0.0.0.0' }), undefined, false), { message: /every request must be authenticated: .*; and --allowed-hosts \/ WORKSPACE_MCP_ALLOWED_HOSTS/ }, 'both missing: one message names both')
})
