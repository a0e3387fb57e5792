import t from 'tap'
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { findNginx, NOBODY, startNginx, startReplica, stop, unprivileged, upstreamsSeen } from '../helpers/processes.js'
import { findRedis, startRedis } from '../helpers/redis.js'
import { CLI, FIXTURE_SERVE } from '../helpers/spawn-stdio.js'
import { runCli } from '../helpers/cli.js'
import { cpuMs, uidOf } from '../helpers/proc.js'
import { waitUntil } from '../helpers/wait.js'

// Scale-out on real parts, all on 127.0.0.1, as docker/compose.yaml lays it out without Docker: three replicas as an
// unprivileged user, sharing a real redis-server and one code index built once by `workspace-mcp index` on a volume
// they cannot write, behind nginx round-robin (docker/nginx.conf, no stickiness). One session's requests land on every
// replica; every replica answers from the shared index at once and none builds or writes; the session survives the
// kill of one; a stream closed mid-call on one replica is resumed through whichever replica nginx picks next, and no
// event is lost; a task started on one replica is polled through the others, and reported failed when that replica
// is killed; SIGTERM drains a replica to exit 0 while nginx routes around it. The replicas serve the conformance
// fixtures beside the product's tools (test_reconnection closes a stream mid-call).

const drop = unprivileged()
const skip = findNginx() === undefined
  ? 'nginx is not installed (apt-get install nginx; .ci/run installs it)'
  : findRedis() === undefined
    ? 'redis-server is not installed (apt-get install redis-server; .ci/run installs it)'
    : drop.reason ?? (existsSync(CLI) ? false : `the built bin ${CLI} is missing (npm run build)`)

t.test('three replicas behind round-robin nginx: sessions through Redis, one index built once and only read, a kill survived, a stream resumed', { skip, timeout: 120_000 }, async t => {
  const base = mkdtempSync(join(tmpdir(), 'wmcp-scale-'))
  t.teardown(() => rmSync(base, { recursive: true, force: true }))
  chmodSync(base, 0o755)
  const root = join(base, 'workspace')
  mkdirSync(root)
  writeFileSync(join(root, 'README.md'), '# Scale-out\n\nany replica reads this\n')
  for (let i = 0; i < 400; i++) writeFileSync(join(root, `unit${i}.c`), Array.from({ length: 10 }, (_, j) => `int op_${i}_${j}(int a) { return a * ${j}; }`).join('\n') + '\n')
  // Owned by root and only readable by the replicas (nobody): a read-only shared volume, as k8s mounts it.
  const shared = join(base, 'index')
  mkdirSync(shared, { mode: 0o755 })
  const nginxDir = join(base, 'nginx')
  mkdirSync(nginxDir)
  if (drop.prefix.length > 0) chownSync(nginxDir, NOBODY, NOBODY)
  const redisUrl = await startRedis(t)

  // The build job, in this process (its own process is test/bin/index-command.test.ts's subject, not this test's).
  const built = await runCli(['index', '--root', root, '--state-dir', shared, '--log-level', 'warn'])
  t.equal(built.status, 0, built.stderr)
  t.match(built.stdout, /: 400 source files, 400 chunks, 4000 symbols/)
  const published = readdirSync(shared)

  const args = ['--mode', 'stateful', '--redis-url', redisUrl, '--session-check-ms', '200', '--code-index', 'shared', '--state-dir', shared, '--root', root]
  const replicas = await Promise.all([0, 1, 2].map(() => startReplica(t, args, FIXTURE_SERVE)))
  const started = replicas.map(r => cpuMs(r.child.pid!) / 1000)
  if (drop.prefix.length > 0) {
    for (const r of replicas) t.equal(uidOf(r.child.pid!), NOBODY, 'replica runs as nobody, not root')
  } else {
    t.not(process.getuid?.(), 0, 'not root: replicas run as the current user')
  }
  const proxy = await startNginx(t, nginxDir, replicas.map(r => r.port))
  const url = `http://127.0.0.1:${proxy.port}/mcp`

  // Each replica, asked directly in a session of its own: the index is there at once, nothing to wait for.
  for (const [i, replica] of replicas.entries()) {
    const direct = new Client({ name: `direct-${i}`, version: '1.0.0' })
    await direct.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${replica.port}/mcp`)))
    const found = await direct.callTool({ name: 'find_symbol', arguments: { name: `op_${i}_3` } })
    t.match(JSON.stringify(found.content), `unit${i}.c`, `replica ${i + 1} answers from the shared index`)
    await direct.close()
  }

  const client = new Client({ name: 'scale-out', version: '1.0.0' })
  const transport = new StreamableHTTPClientTransport(new URL(url))
  await client.connect(transport)
  t.teardown(() => client.close())
  const session = transport.sessionId as string
  t.ok(session, 'stateful: a session id through nginx')
  t.equal(client.getServerVersion()?.name, 'workspace-mcp', 'initialize answered through nginx')

  // Round-robin: six calls reach all three replicas, each serving the one session.
  for (let i = 0; i < 6; i++) {
    const read = await client.callTool({ name: i % 2 === 0 ? 'read_files' : 'find_symbol', arguments: i % 2 === 0 ? { files: [{ path: 'README.md' }] } : { name: 'op_399_9' } })
    t.match(JSON.stringify(read.content), i % 2 === 0 ? 'any replica reads this' : 'unit399.c', `call ${i + 1}`)
  }
  t.equal((await upstreamsSeen(nginxDir, replicas.map(r => r.port), 3)).size, 3, 'every replica served the session')
  for (const [i, replica] of replicas.entries()) {
    const cpu = cpuMs(replica.child.pid!) / 1000 - started[i]
    t.ok(cpu < 2, `replica ${i + 1} used ${cpu.toFixed(2)} s of CPU once serving: no index built`)
  }
  t.same(readdirSync(shared), published, 'the replicas wrote nothing beside the index (no log, no lock)')

  // Tasks (2026-07-28): two started on replica 1 itself, polled through nginx, so replicas 2 and 3 answer too.
  const modern = async (target: string, method: string, params: Record<string, unknown>, name: string): Promise<Record<string, any>> => {
    const res = await fetch(target, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28', 'mcp-method': method, 'mcp-name': name },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: { ...params, _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': { extensions: { 'io.modelcontextprotocol/tasks': {} } } } } })
    })
    return await res.json() as Record<string, any>
  }
  const pollTask = async (taskId: string, seen: Set<string>): Promise<Record<string, any>> => {
    let task: Record<string, any> = {}
    // Polled as its client would, every 100 ms: a minute at most for a loaded machine.
    await waitUntil(async () => {
      task = (await modern(url, 'tasks/get', { taskId }, taskId)).result
      seen.add(task.status)
      return ['completed', 'failed', 'cancelled'].includes(task.status)
    }, `task ${taskId} to settle`, 60_000, 100)
    return task
  }
  const first = `http://127.0.0.1:${replicas[0].port}/mcp`
  const quick = (await modern(first, 'tools/call', { name: 'slow_compute', arguments: { seconds: 1, label: 'replicated' } }, 'slow_compute')).result
  t.match(await pollTask(quick.taskId, new Set()), { status: 'completed', result: { content: [{ text: 'computed replicated after 1 s' }] } }, 'a task replica 1 runs, polled to its result through nginx')
  const orphan = (await modern(first, 'tools/call', { name: 'slow_compute', arguments: { seconds: 600 } }, 'slow_compute')).result
  t.equal((await modern(url, 'tasks/get', { taskId: orphan.taskId }, orphan.taskId)).result.status, 'working')

  // One replica dies without a goodbye; the session lives on in the others, and its task is reported lost.
  replicas[0].child.kill('SIGKILL')
  await new Promise(resolve => replicas[0].child.once('exit', resolve))
  const statuses = new Set<string>()
  t.match(await pollTask(orphan.taskId, statuses), { status: 'failed', error: { message: /^the server running this task stopped before it finished/ } }, 'the killed replica\'s task is failed with the reason, never left working')
  t.ok(statuses.has('working'), 'it was working until its heartbeats stopped')
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

  // SIGTERM drains and exits 0, which is what `docker stop` and Kubernetes rely on.
  t.equal(await stop(replicas[1].child), 0, 'a replica exits 0 on SIGTERM')
  const health = await fetch(`http://127.0.0.1:${proxy.port}/healthz`)
  t.equal(health.status, 200, 'nginx routes around the stopped replica')
  await health.body?.cancel()
})
