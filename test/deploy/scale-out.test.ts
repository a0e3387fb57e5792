import t from 'tap'
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { findNginx, NOBODY, startNginx, startReplica, unprivileged, upstreamsSeen } from '../helpers/processes.js'
import { findRedis, startRedis } from '../helpers/redis.js'
import { CLI } from '../helpers/spawn-stdio.js'

// Stateful scale-out on real parts, all on 127.0.0.1: three replicas of the built bin sharing a real
// redis-server, behind nginx round-robin (docker/nginx.conf, no stickiness). One session's requests
// land on every replica; it survives the kill of one; a stream closed mid-call on one replica is resumed
// through whichever replica nginx picks next, and no event is lost.

const drop = unprivileged()
const skip = findNginx() === undefined
  ? 'nginx is not installed (apt-get install nginx; .ci/run installs it)'
  : findRedis() === undefined
    ? 'redis-server is not installed (apt-get install redis-server; .ci/run installs it)'
    : drop.reason ?? (existsSync(CLI) ? false : `the built bin ${CLI} is missing (npm run build)`)

t.test('three stateful replicas share sessions through Redis behind round-robin nginx', { skip, timeout: 90_000 }, async t => {
  const base = mkdtempSync(join(tmpdir(), 'wmcp-scale-'))
  t.teardown(() => rmSync(base, { recursive: true, force: true }))
  chmodSync(base, 0o755)
  const root = join(base, 'workspace')
  mkdirSync(root)
  writeFileSync(join(root, 'README.md'), '# Scale-out\n\nany replica reads this\n')
  const nginxDir = join(base, 'nginx')
  mkdirSync(nginxDir)
  if (drop.prefix.length > 0) chownSync(nginxDir, NOBODY, NOBODY)
  const redisUrl = await startRedis(t)

  const args = ['--mode', 'stateful', '--redis-url', redisUrl, '--session-check-ms', '200', '--fixtures', 'conformance', '--root', root]
  const replicas = await Promise.all([0, 1, 2].map(() => startReplica(t, args)))
  const proxy = await startNginx(t, nginxDir, replicas.map(r => r.port))
  const url = `http://127.0.0.1:${proxy.port}/mcp`

  const client = new Client({ name: 'scale-out', version: '1.0.0' })
  const transport = new StreamableHTTPClientTransport(new URL(url))
  await client.connect(transport)
  t.teardown(() => client.close())
  const session = transport.sessionId as string
  t.ok(session, 'stateful: a session id through nginx')

  // Round-robin: six calls reach all three replicas, each serving the one session.
  for (let i = 0; i < 6; i++) {
    const read = await client.callTool({ name: 'read_files', arguments: { files: [{ path: 'README.md' }] } })
    t.match(JSON.stringify(read.content), 'any replica reads this', `call ${i + 1}`)
  }
  t.equal((await upstreamsSeen(nginxDir, replicas.map(r => r.port), 3)).size, 3, 'every replica served the session')

  // One replica dies without a goodbye; the session lives on in the others.
  replicas[0].child.kill('SIGKILL')
  await new Promise(resolve => replicas[0].child.once('exit', resolve))
  for (let i = 0; i < 4; i++) {
    const list = await client.listTools()
    t.ok(list.tools.length > 0, `after the kill, request ${i + 1} is served`)
  }

  // A POST stream closed mid-call (test_reconnection) is resumed with Last-Event-ID through nginx.
  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' }
  const post = await fetch(url, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: 77, method: 'tools/call', params: { name: 'test_reconnection', arguments: {} } }) })
  const before = (await post.text()).split('\n').filter(l => l.startsWith('id: ')).map(l => l.slice(4))
  t.ok(before.length > 0, 'the POST stream was primed before it closed')
  let after: string[] = []
  let body = ''
  for (let attempt = 0; attempt < 3 && !body.includes('"id":77'); attempt++) {
    const resumed = await fetch(url, { headers: { ...headers, accept: 'text/event-stream', 'last-event-id': before.at(-1) as string } })
    body = await resumed.text()
    after = body.split('\n').filter(l => l.startsWith('id: ')).map(l => l.slice(4))
  }
  t.match(body, /"id":77.*Reconnection test completed/s, 'the response arrived on the resumed stream')
  const seq = [...before, ...after].map(id => Number(id.split('.')[1]))
  t.strictSame(seq, seq.map((_, i) => i), 'event ids 0, 1, 2…: none lost, none twice')

  await client.close()
})
