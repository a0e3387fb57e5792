import t, { type Test } from 'tap'
import { createHash } from 'node:crypto'
import { Type } from '@sinclair/typebox'
import { Agent, fetch as undiciFetch } from 'undici'
import { buildTestApp } from '../helpers/build-app.js'
import { testTools } from '../helpers/engine.js'
import { findRedis, startRedis } from '../helpers/redis.js'
import { defineTool, textResult } from '../../src/tool-api/define-tool.js'

// Two replicas in one process sharing a real Redis: a session opened on one is served by the other,
// bound to its principal there too; a stream closed on one is resumed on the other; a DELETE on one
// ends it everywhere, a replica's shutdown does not.

const skip = findRedis() === undefined ? 'redis-server is not installed (apt-get install redis-server; .ci/run installs it)' : false
const TOKENS = ['alice-secret-1', 'bob-secret-22']
const authTokens = TOKENS.map((token, i) => `${['alice', 'bob'][i]}:${createHash('sha256').update(token).digest('hex')}`)

const closesEarly = defineTool({
  name: 'closes_early',
  title: 'Closes early',
  category: 'guide',
  description: 'Closes its stream, then answers a little later.',
  annotations: {},
  input: Type.Object({}),
  async run (_args, ctx) {
    await ctx.progress(1, 2)
    ctx.closeStream()
    // Whether the answer comes before the client resumes or after, the resumed stream has it (replayed, or followed).
    await new Promise(resolve => setTimeout(resolve, 100))
    return textResult('answered on the other replica')
  }
})

async function replicas (t: Test) {
  const redisUrl = await startRedis(t)
  const dispatcher = new Agent()
  // When a replica checks a session against the store again (every 50 ms) is read on a clock the test moves.
  const clock = { at: Date.now(), now () { return this.at } }
  const apps = await Promise.all([0, 1].map(async () => {
    const { app } = await buildTestApp(t, { tools: [...testTools, closesEarly], config: { redisUrl, sessionCheckMs: 50, authTokens }, services: { clock } })
    return { app, base: `${await app.listen({ host: '127.0.0.1', port: 0 })}/mcp` }
  }))
  t.teardown(() => dispatcher.destroy())
  const request = (replica: number, token: string, init: { method?: string, headers?: Record<string, string>, body?: unknown }) => undiciFetch(apps[replica].base, {
    dispatcher,
    method: init.method ?? 'POST',
    headers: { ...(init.body === undefined ? {} : { 'content-type': 'application/json' }), accept: 'application/json, text/event-stream', authorization: `Bearer ${token}`, ...init.headers },
    body: init.body === undefined ? undefined : JSON.stringify(init.body)
  })
  const open = async (replica: number, token = TOKENS[0]): Promise<string> => {
    const res = await request(replica, token, { body: { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } } } })
    return res.headers.get('mcp-session-id') as string
  }
  return { apps, request, open, clock }
}

const LIST = { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} }

t.test('a session opened on one replica is served by the other, and only for its own principal', { skip }, async (t) => {
  const { request, open } = await replicas(t)
  const session = await open(0)

  const elsewhere = await request(1, TOKENS[0], { headers: { 'mcp-session-id': session }, body: LIST })
  const stranger = await request(1, TOKENS[1], { headers: { 'mcp-session-id': session }, body: LIST })
  const unknown = await request(1, TOKENS[0], { headers: { 'mcp-session-id': 'never-issued' }, body: LIST })

  t.equal(elsewhere.status, 200)
  t.match(await elsewhere.json(), { id: 2, result: { tools: Array } })
  t.equal(stranger.status, 404, 'another token gets nothing on any replica')
  t.equal(unknown.status, 404)
})

t.test('a POST stream closed on one replica is resumed on the other: no event lost', { skip }, async (t) => {
  const { request, open } = await replicas(t)
  const session = await open(0)

  const post = await request(0, TOKENS[0], { headers: { 'mcp-session-id': session }, body: { jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'closes_early', arguments: {}, _meta: { progressToken: 'x' } } } })
  const before = (await post.text()).split('\n').filter(l => l.startsWith('id: ')).map(l => l.slice(4))
  const resumed = await request(1, TOKENS[0], { method: 'GET', headers: { accept: 'text/event-stream', 'mcp-session-id': session, 'last-event-id': before.at(-1) as string } })
  const text = await resumed.text()

  t.equal(resumed.status, 200)
  t.match(text, /answered on the other replica/)
  const ids = [...before, ...text.split('\n').filter(l => l.startsWith('id: ')).map(l => l.slice(4))].map(id => Number(id.split('.')[1]))
  t.strictSame(ids, [0, 1, 2], 'priming, progress, then the response: each once')
})

t.test('a DELETE on one replica ends the session on every replica; a log level set on one applies on the other', { skip }, async (t) => {
  const { request, open, clock } = await replicas(t)
  const session = await open(0)
  await request(1, TOKENS[0], { headers: { 'mcp-session-id': session }, body: { jsonrpc: '2.0', id: 3, method: 'logging/setLevel', params: { level: 'error' } } })
  clock.at += 100
  const call = await request(0, TOKENS[0], { headers: { 'mcp-session-id': session }, body: { jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'slow_tool', arguments: { ms: 1 } } } })

  const deleted = await request(1, TOKENS[0], { method: 'DELETE', headers: { 'mcp-session-id': session } })
  clock.at += 100
  const after = await request(0, TOKENS[0], { headers: { 'mcp-session-id': session }, body: LIST })

  t.notMatch(await call.text(), /notifications\/message/, 'the info-level log line stays quiet at level error')
  t.equal(deleted.status, 200)
  t.equal(after.status, 404)
})

t.test('a replica that shuts down leaves its sessions to the others', { skip }, async (t) => {
  const { apps, request, open } = await replicas(t)
  const session = await open(0)

  await apps[0].app.close()
  const after = await request(1, TOKENS[0], { headers: { 'mcp-session-id': session }, body: LIST })

  t.equal(after.status, 200)
})
