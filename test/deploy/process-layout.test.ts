import t from 'tap'
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { findNginx, NOBODY, startNginx, startReplica, stop, unprivileged, upstreamsSeen } from '../helpers/processes.js'
import { CLI } from '../helpers/spawn-stdio.js'

// docker/compose.yaml's layout without Docker: two replicas of the built server (stateless, as an
// unprivileged user) behind nginx running docker/nginx.conf itself, reached by the SDK Client.

const nginx = findNginx()
const drop = unprivileged()
const skip = nginx === undefined
  ? 'nginx is not installed (apt-get install nginx; .ci/run installs it)'
  : drop.reason ?? (existsSync(CLI) ? false : `the built bin ${CLI} is missing (npm run build)`)

/** Process UID from /proc (Linux). */
function uidOf (pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find(l => l.startsWith('Uid:'))
  return Number(line?.split(/\s+/)[1])
}

t.test('two stateless replicas as an unprivileged user behind nginx (docker/nginx.conf)', { skip }, async t => {
  const base = mkdtempSync(join(tmpdir(), 'wmcp-layout-'))
  t.teardown(() => rmSync(base, { recursive: true, force: true }))
  chmodSync(base, 0o755)
  const root = join(base, 'workspace')
  mkdirSync(root)
  writeFileSync(join(root, 'README.md'), '# Layout\n\nserved through nginx\n')
  const nginxDir = join(base, 'nginx')
  mkdirSync(nginxDir)
  if (drop.prefix.length > 0) chownSync(nginxDir, NOBODY, NOBODY)

  const replicas = await Promise.all([0, 1].map(() => startReplica(t, ['--mode', 'stateless', '--root', root])))
  if (drop.prefix.length > 0) {
    for (const r of replicas) t.equal(uidOf(r.child.pid!), NOBODY, 'replica runs as nobody, not root')
  } else {
    t.not(process.getuid?.(), 0, 'not root: replicas run as the current user')
  }
  const proxy = await startNginx(t, nginxDir, replicas.map(r => r.port))

  const client = new Client({ name: 'layout', version: '1.0.0' })
  await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${proxy.port}/mcp`)))
  t.teardown(() => client.close())
  t.equal(client.getServerVersion()?.name, 'workspace-mcp', 'initialize answered through nginx')

  const { tools } = await client.listTools()
  const names = tools.map(tool => tool.name)
  t.ok(names.includes('get_tool_usage_guide'), 'tools/list through nginx')

  // Several calls, so round-robin sends some to each replica; every one must succeed.
  for (let i = 0; i < 4; i++) {
    const result = await client.callTool({ name: 'get_tool_usage_guide', arguments: { tool_names: ['get_tool_usage_guide'] } })
    t.not(result.isError, true, `tools/call ${i + 1} through nginx`)
  }
  if (names.includes('read_files')) {
    // The unprivileged replicas read the workspace they were given.
    const read = await client.callTool({ name: 'read_files', arguments: { files: [{ path: 'README.md' }] } })
    t.match(JSON.stringify(read.content), 'served through nginx', 'read_files reads the workspace as nobody')
  }

  // nginx logs $upstream_addr per request: both replicas must have answered.
  const seen = await upstreamsSeen(nginxDir, replicas.map(r => r.port), 2)
  t.equal(seen.size, 2, 'nginx balanced requests over both replicas')

  const res = await fetch(`http://127.0.0.1:${proxy.port}/mcp`)
  t.equal(res.status, 405, 'GET /mcp through nginx: stateless replicas answer 405')
  await res.body?.cancel()

  await client.close()
  // SIGTERM drains and exits 0, which is what `docker stop` and Kubernetes rely on.
  t.equal(await stop(replicas[0].child), 0, 'a replica exits 0 on SIGTERM')
  const after = await fetch(`http://127.0.0.1:${proxy.port}/healthz`)
  t.equal(after.status, 200, 'nginx routes around the stopped replica')
  await after.body?.cancel()
})
