import t from 'tap'
import { spawn } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { request } from 'undici'
import { CLI } from '../helpers/spawn-stdio.js'

const root = mkdtempSync(join(tmpdir(), 'wmcp-http-bin-'))
writeFileSync(join(root, 'a.txt'), 'hello\n')

t.test('serve logs its URL, answers /healthz and exits 0 after SIGTERM', { timeout: 30000 }, async (t) => {
  const child = spawn(process.execPath, [CLI, 'serve', '--root', root, '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] })
  t.teardown(() => { if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL') })
  let output = ''
  const url = await new Promise<string>((resolve, reject) => {
    const onData = (c: Buffer): void => {
      output += c
      const m = /listening at (http:\/\/127\.0\.0\.1:\d+)\/mcp/.exec(output)
      if (m !== null) resolve(m[1])
    }
    child.stdout.on('data', onData)
    child.stderr.on('data', onData)
    child.once('exit', () => reject(new Error(output)))
  })

  const health = await request(`${url}/healthz`)
  const body = await health.body.json()
  const exit = new Promise<[number | null, string | null]>(resolve => child.once('exit', (code, signal) => resolve([code, signal])))
  child.kill('SIGTERM')

  t.equal(health.statusCode, 200)
  t.same(body, { status: 'ok' })
  t.same(await exit, [0, null])
  t.match(output, /"msg":"draining"/)
})

/** Runs `serve` with `args` until it exits; returns its exit code and everything it printed. */
async function serveUntilExit (args: string[]): Promise<{ code: number | null, output: string }> {
  const child = spawn(process.execPath, [CLI, 'serve', '--root', root, '--port', '0', ...args], { stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  child.stdout.on('data', (c) => { output += c })
  child.stderr.on('data', (c) => { output += c })
  const code = await new Promise<number | null>(resolve => child.once('exit', resolve))
  return { code, output }
}

t.test('serve refuses a non-loopback bind without authentication, saying what to set, exit 2', { timeout: 30000 }, async (t) => {
  const { code, output } = await serveUntilExit(['--host', '0.0.0.0', '--allowed-hosts', 'mcp.example.com'])

  t.equal(code, 2)
  t.match(output, /WORKSPACE_MCP_AUTH_TOKENS/)
  t.match(output, /--insecure-no-auth/)
})

t.test('serve refuses a non-loopback bind without allowedHosts, naming the setting, exit 2', { timeout: 30000 }, async (t) => {
  const { code, output } = await serveUntilExit(['--host', '0.0.0.0', '--insecure-no-auth'])

  t.equal(code, 2)
  t.match(output, /allowedHosts/)
  t.match(output, /WORKSPACE_MCP_ALLOWED_HOSTS/)
})
