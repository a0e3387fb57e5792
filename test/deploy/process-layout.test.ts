import t, { type Test } from 'tap'
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { CLI } from '../helpers/spawn-stdio.js'

// docker/compose.yaml's layout without Docker: two replicas of the built server (stateless, as an
// unprivileged user) behind nginx running docker/nginx.conf itself, reached by the SDK Client.

const NOBODY = 65534
const NGINX_CONF = new URL('../../docker/nginx.conf', import.meta.url)

function findNginx (): string | undefined {
  for (const candidate of ['/usr/sbin/nginx', '/usr/bin/nginx', '/usr/local/sbin/nginx']) if (existsSync(candidate)) return candidate
  const which = spawnSync('sh', ['-c', 'command -v nginx'], { encoding: 'utf8' })
  return which.status === 0 && which.stdout.trim() !== '' ? which.stdout.trim() : undefined
}

/** Command prefix that drops to `nobody` when we are root (setpriv execs, so the PID stays the server's). */
function unprivileged (): { prefix: string[], reason?: string } {
  if (process.getuid?.() !== 0) return { prefix: [] }
  const probe = spawnSync('setpriv', ['--reuid', String(NOBODY), '--regid', String(NOBODY), '--clear-groups', 'true'])
  if (probe.error !== undefined || probe.status !== 0) return { prefix: [], reason: `cannot drop privileges with setpriv (${probe.error?.message ?? `exit ${probe.status}`})` }
  return { prefix: ['setpriv', '--reuid', String(NOBODY), '--regid', String(NOBODY), '--clear-groups'] }
}

const nginx = findNginx()
const drop = unprivileged()
const skip = nginx === undefined
  ? 'nginx is not installed (apt-get install nginx; .ci/run installs it)'
  : drop.reason ?? (existsSync(CLI) ? false : `the built bin ${CLI} is missing (npm run build)`)

/** Stops a child by PID: SIGTERM, SIGKILL after 3 s; resolves with its exit code. */
async function stop (child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return child.exitCode
  const exited = new Promise<number | null>(resolve => child.once('exit', code => resolve(code)))
  process.kill(child.pid!, 'SIGTERM')
  const timer = setTimeout(() => { if (child.exitCode === null && child.signalCode === null) process.kill(child.pid!, 'SIGKILL') }, 3000)
  const code = await exited
  clearTimeout(timer)
  return code
}

async function freePort (): Promise<number> {
  const server = createServer()
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise(resolve => server.close(resolve))
  return port
}

/** Starts one replica of the built bin on 127.0.0.1:0 as `nobody`; resolves its port once it logs its URL. */
async function startReplica (t: Test, root: string): Promise<{ child: ChildProcess, port: number }> {
  const [command, ...args] = [...drop.prefix, process.execPath, CLI, 'serve', '--host', '127.0.0.1', '--port', '0', '--mode', 'stateless', '--root', root]
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, WORKSPACE_MCP_LOG_LEVEL: 'info' } })
  t.teardown(() => stop(child))
  let output = ''
  const port = await new Promise<number>((resolve, reject) => {
    const guard = setTimeout(() => reject(new Error(`replica did not report a URL within 15 s:\n${output}`)), 15000)
    const onData = (chunk: Buffer): void => {
      output += chunk.toString()
      const m = /http:\/\/127\.0\.0\.1:(\d+)/.exec(output)
      if (m !== null && m[1] !== '0') { clearTimeout(guard); resolve(Number(m[1])) }
    }
    child.stdout!.on('data', onData)
    child.stderr!.on('data', onData)
    child.once('exit', code => { clearTimeout(guard); reject(new Error(`replica exited with ${code}:\n${output}`)) })
  })
  return { child, port }
}

/** docker/nginx.conf with the replicas, a 127.0.0.1 port and every path nginx writes moved into `dir`. */
function nginxConfig (dir: string, listen: number, replicas: number[]): string {
  const source = readFileSync(NGINX_CONF, 'utf8')
  const temp = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map(k => `  ${k}_temp_path ${join(dir, k)};`).join('\n')
  const replaced = source
    .replace(/^\s*server mcp:3000;$/m, replicas.map(p => `    server 127.0.0.1:${p};`).join('\n'))
    .replace(/^\s*listen 8080;$/m, `    listen 127.0.0.1:${listen};`)
    .replace(/access_log \/dev\/stdout mcp;/, `access_log ${join(dir, 'access.log')} mcp;`)
    .replace(/^http \{$/m, `http {\n${temp}`)
  for (const marker of ['server 127.0.0.1:', `listen 127.0.0.1:${listen};`, 'access.log', '_temp_path']) {
    if (!replaced.includes(marker)) throw new Error(`docker/nginx.conf changed shape: could not place '${marker}'`)
  }
  return replaced
}

async function startNginx (t: Test, dir: string, replicas: number[]): Promise<{ child: ChildProcess, port: number }> {
  const port = await freePort()
  const conf = join(dir, 'nginx.conf')
  writeFileSync(conf, nginxConfig(dir, port, replicas))
  const [command, ...args] = [...drop.prefix, nginx!, '-p', dir, '-c', conf, '-e', join(dir, 'error.log'), '-g', `daemon off; pid ${join(dir, 'nginx.pid')};`]
  const child = spawn(command, args, { stdio: ['ignore', 'ignore', 'pipe'] })
  t.teardown(() => stop(child))
  let stderr = ''
  child.stderr!.on('data', chunk => { stderr += chunk })
  // Ready when it answers /healthz (proxied to a replica); bounded by 10 s.
  const deadline = Date.now() + 10000
  while (Date.now() < deadline) {
    if (child.exitCode !== null) break
    try {
      const res = await fetch(`http://127.0.0.1:${port}/healthz`)
      if (res.status === 200) return { child, port }
    } catch {}
    await new Promise(resolve => setTimeout(resolve, 100))
  }
  const log = existsSync(join(dir, 'error.log')) ? readFileSync(join(dir, 'error.log'), 'utf8') : ''
  throw new Error(`nginx did not answer on 127.0.0.1:${port}: ${stderr}\n${log}`)
}

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

  const replicas = await Promise.all([startReplica(t, root), startReplica(t, root)])
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
  const accessLog = join(nginxDir, 'access.log')
  let seen = new Set<string>()
  for (let i = 0; i < 50 && seen.size < 2; i++) {
    const log = existsSync(accessLog) ? readFileSync(accessLog, 'utf8') : ''
    seen = new Set(replicas.map(r => `127.0.0.1:${r.port}`).filter(addr => log.includes(`upstream=${addr}`)))
    if (seen.size < 2) await new Promise(resolve => setTimeout(resolve, 100))
  }
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
