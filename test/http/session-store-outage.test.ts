import t from 'tap'
import { buildTestApp } from '../helpers/build-app.js'
import { findRedis, redisServer } from '../helpers/redis.js'
import { postMcp } from '../helpers/rpc.js'
import { waitUntil } from '../helpers/wait.js'

// A replica whose Redis dies (redis-server SIGKILLed mid-test) and comes back: a session whose record cannot
// be saved is closed at once and holds no slot against the limits, the client is told 503 + Retry-After, the
// fault is reported once as the session-store degradation, and sessions open again when Redis answers.

const skip = findRedis() === undefined ? 'redis-server is not installed (apt-get install redis-server; .ci/run installs it)' : false
const INIT = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } } }

t.test('a session whose record cannot be saved holds no slot: 503 + Retry-After, reported once; sessions open again when Redis is back', { skip }, async (t) => {
  const redis = await redisServer(t)
  const { app, runtime, lines } = await buildTestApp(t, { config: { redisUrl: redis.url, maxSessionsPerClient: 2, maxSessions: 3, sessionCheckMs: 0 } })
  const first = await postMcp(app, INIT)
  const session = first.headers['mcp-session-id'] as string

  await redis.kill()
  const refused = [await postMcp(app, INIT), await postMcp(app, INIT), await postMcp(app, INIT)]
  const lookup = await postMcp(app, { jsonrpc: '2.0', id: 2, method: 'ping' }, { 'mcp-session-id': session })
  const held = app.mcpStats().sessions
  const during = runtime.degradations.current()
  await redisServer(t, redis.port)
  // The Redis client reconnects on its own schedule: ask, as a client would, until it has.
  let reopened = await postMcp(app, INIT)
  await waitUntil(async () => {
    if (reopened.statusCode === 503) reopened = await postMcp(app, INIT)
    return reopened.statusCode !== 503
  }, 'the Redis client to reconnect', 30_000, 100)
  const overLimit = await postMcp(app, INIT)

  t.equal(first.statusCode, 200)
  for (const res of refused) {
    t.equal(res.statusCode, 503)
    t.equal(res.headers['retry-after'], '2')
    t.notOk(res.headers['mcp-session-id'], 'no session id is handed out')
    t.strictSame(res.json(), { jsonrpc: '2.0', id: null, error: { code: -32000, message: 'Service Unavailable: the session store cannot be reached; retry later' } })
  }
  t.equal(lookup.statusCode, 503, 'a session that must be read from the store is told the same, not 500')
  t.equal(held, 1, 'only the saved session is live here')
  t.match(during, [{ component: 'session-store', reason: /shared session store fails/, count: 4 }])
  const warned = lines.filter(l => l.msg === `degraded: session-store: ${during[0].reason}`)
  t.equal(warned.length, 1, 'one warn line for the outage')
  t.match(warned[0], { level: 40, err: { message: String } }, 'with the cause')
  t.equal(reopened.statusCode, 200, 'the refused sessions never counted against the client\'s limit of 2')
  t.equal(overLimit.statusCode, 429, 'the limit itself still holds: this is the client\'s third')
  t.same(runtime.degradations.current(), [])
  t.ok(lines.some(l => l.msg === 'recovered: session-store' && l.level === 30))
  t.equal(lines.filter(l => l.msg === 'redis error' && l.level === 40).length, 1, 'the client\'s failed reconnects: one warn line, the rest at debug')
  t.ok(lines.some(l => l.msg === 'redis error' && l.level === 20))
  t.ok(lines.some(l => l.msg === 'redis connection restored' && l.level === 30))
})
