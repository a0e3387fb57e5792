import type { Test } from 'tap'
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { onPath } from './proc.js'
import { freePort } from './redis.js'
import { childEnv, CLI } from './spawn-stdio.js'
import { waitUntil } from './wait.js'

// Real processes for the deployment tests: replicas of the built bin, nginx running docker/nginx.conf.

/** The uid of `nobody`, which replicas and nginx run as when the tests run as root. */
export const NOBODY = 65534
const NGINX_CONF = new URL('../../docker/nginx.conf', import.meta.url)

/** Where nginx is, or undefined (the tests that need it skip, naming the package). */
export function findNginx (): string | undefined {
  return onPath('nginx', ['/usr/sbin/nginx', '/usr/bin/nginx', '/usr/local/sbin/nginx'])
}

/** Command prefix that drops to `nobody` when we are root (setpriv execs, so the PID stays the server's). */
export function unprivileged (): { prefix: string[], reason?: string } {
  if (process.getuid?.() !== 0) return { prefix: [] }
  const probe = spawnSync('setpriv', ['--reuid', String(NOBODY), '--regid', String(NOBODY), '--clear-groups', 'true'])
  if (probe.error !== undefined || probe.status !== 0) return { prefix: [], reason: `cannot drop privileges with setpriv (${probe.error?.message ?? `exit ${probe.status}`})` }
  return { prefix: ['setpriv', '--reuid', String(NOBODY), '--regid', String(NOBODY), '--clear-groups'] }
}

/**
 * tap hooks every node child it sees spawned, and the hook writes to the checkout's .tap/ folders when the
 * child exits: a child running as `nobody` must be able to write there, or its clean exit turns into exit 1
 * (its coverage is then recorded too). Sticky and world-writable, like /tmp.
 */
function letNobodyRecord (): void {
  for (const dir of ['processinfo', 'coverage']) {
    const path = join(process.cwd(), '.tap', dir)
    mkdirSync(path, { recursive: true })
    chmodSync(path, 0o1777)
  }
}

/** Stops a child by PID: SIGTERM, SIGKILL after 3 s; resolves with its exit code. */
export async function stop (child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return child.exitCode
  const exited = new Promise<number | null>(resolve => child.once('exit', code => resolve(code)))
  process.kill(child.pid!, 'SIGTERM')
  const timer = setTimeout(() => { if (child.exitCode === null && child.signalCode === null) process.kill(child.pid!, 'SIGKILL') }, 3000)
  const code = await exited
  clearTimeout(timer)
  return code
}

/** Starts one replica of the built bin (`serve` on 127.0.0.1:0 with `args`, as `nobody` when root); resolves its port once it logs its URL. */
export async function startReplica (t: Test, args: string[], serve = [CLI, 'serve']): Promise<{ child: ChildProcess, port: number }> {
  const { prefix } = unprivileged()
  const [command, ...rest] = [...prefix, process.execPath, ...serve, '--host', '127.0.0.1', '--port', '0', ...args]
  if (prefix.length > 0) letNobodyRecord()
  const child = spawn(command, rest, { stdio: ['ignore', 'pipe', 'pipe'], env: childEnv(CLI, { WORKSPACE_MCP_LOG_LEVEL: 'info' }) })
  t.teardown(() => stop(child))
  let output = ''
  const port = await new Promise<number>((resolve, reject) => {
    const guard = setTimeout(() => reject(new Error(`replica did not report a URL within 15 s:\n${output}`)), 15000)
    const onData = (chunk: Buffer): void => {
      output += chunk.toString()
      const m = /listening at http:\/\/127\.0\.0\.1:(\d+)/.exec(output)
      if (m !== null && m[1] !== '0') { clearTimeout(guard); resolve(Number(m[1])) }
    }
    child.stdout!.on('data', onData)
    child.stderr!.on('data', onData)
    child.once('exit', code => { clearTimeout(guard); reject(new Error(`replica exited with ${code}:\n${output}`)) })
  })
  return { child, port }
}

/** docker/nginx.conf with the replicas, a 127.0.0.1 port and every path nginx writes moved into `dir`. */
export function nginxConfig (dir: string, listen: number, replicas: number[]): string {
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

/** Runs nginx with docker/nginx.conf in front of `replicas`; resolves once it proxies /healthz. */
export async function startNginx (t: Test, dir: string, replicas: number[]): Promise<{ child: ChildProcess, port: number }> {
  const nginx = findNginx()
  if (nginx === undefined) throw new Error('nginx is not installed (apt-get install nginx)')
  const port = await freePort()
  const conf = join(dir, 'nginx.conf')
  writeFileSync(conf, nginxConfig(dir, port, replicas))
  const [command, ...args] = [...unprivileged().prefix, nginx, '-p', dir, '-c', conf, '-e', join(dir, 'error.log'), '-g', `daemon off; pid ${join(dir, 'nginx.pid')};`]
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
    // nginx says nothing when it is ready: asking /healthz again is the only way to know.
    await new Promise(resolve => setTimeout(resolve, 100))
  }
  const log = existsSync(join(dir, 'error.log')) ? readFileSync(join(dir, 'error.log'), 'utf8') : ''
  throw new Error(`nginx did not answer on 127.0.0.1:${port}: ${stderr}\n${log}`)
}

/** The replicas (by port) nginx's access log shows answering, waiting (30 s at most) for `expected` of them. */
export async function upstreamsSeen (dir: string, ports: number[], expected: number): Promise<Set<number>> {
  const accessLog = join(dir, 'access.log')
  let seen = new Set<number>()
  // nginx writes a request's log line as the request ends, which may be after its client had the answer.
  await waitUntil(() => {
    const log = existsSync(accessLog) ? readFileSync(accessLog, 'utf8') : ''
    seen = new Set(ports.filter(port => log.includes(`upstream=127.0.0.1:${port}`)))
    return seen.size >= expected
  }, `nginx's access log to show ${expected} replicas answering`, 30_000, 100).catch(() => {})
  return seen
}
