import t from 'tap'
import { spawn } from 'node:child_process'
import { chmodSync, mkdirSync, mkdtempSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { childEnv, CLI, cliCommand, COVERED_CLI, spawnStdio } from '../helpers/spawn-stdio.js'
import { spawnHttp } from '../helpers/spawn-http.js'

// The root is checked at boot by both serving commands: a root that is missing, not a folder or not
// listable, and a broad one (/, home, system folder) without --allow-broad-root, is exit 2 with a
// message naming --root / WORKSPACE_MCP_ROOT. On the old code these started (or exited 1 with a raw
// ENOENT), so the serve cases would run until the guard kills them.

const base = realpathSync(mkdtempSync(join(tmpdir(), 'wmcp-root-bin-')))
chmodSync(base, 0o755)
const file = join(base, 'a-file.txt')
writeFileSync(file, 'not a folder\n')
const rootLink = join(base, 'link-to-slash')
symlinkSync('/', rootLink)
const home = join(base, 'home')
mkdirSync(join(home, 'project'), { recursive: true })
const locked = join(base, 'locked')
mkdirSync(locked, { mode: 0o000 })
chmodSync(locked, 0o000)

const NOBODY = 65534
const asRoot = process.getuid?.() === 0
const FLAG = /root \(--root \/ WORKSPACE_MCP_ROOT\)/

interface Run { code: number | null, signal: NodeJS.Signals | null, stderr: string, stdout: string }

/** Runs the built bin to its exit (SIGKILL after 20 s, so a server that starts anyway fails the test). */
function runBin (args: string[], opts: { env?: NodeJS.ProcessEnv, cwd?: string, uid?: number } = {}): Promise<Run> {
  const { command, args: argv } = cliCommand(CLI, args)
  const child = spawn(command, argv, {
    env: childEnv(CLI, opts.env),
    cwd: opts.cwd,
    stdio: ['pipe', 'pipe', 'pipe'],
    ...(opts.uid !== undefined ? { uid: opts.uid, gid: opts.uid } : {})
  })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (c: Buffer) => { stdout += c.toString() })
  child.stderr.on('data', (c: Buffer) => { stderr += c.toString() })
  child.stdin.end()
  const guard = setTimeout(() => child.kill('SIGKILL'), 20_000)
  return new Promise(resolve => child.once('close', (code, signal) => { clearTimeout(guard); resolve({ code, signal, stderr, stdout }) }))
}

const refused: Array<{ name: string, root: string, env?: NodeJS.ProcessEnv, why: RegExp }> = [
  { name: 'a missing path', root: join(base, 'no-such-folder'), why: /no-such-folder does not exist/ },
  { name: 'a path through a file', root: join(file, 'sub'), why: /does not exist \(a part of the path is a file/ },
  { name: 'a regular file', root: file, why: /a-file\.txt is a regular file, not a folder/ },
  { name: '/', root: '/', why: /\/ is refused: it is the file system root.*--allow-broad-root \(WORKSPACE_MCP_ALLOW_BROAD_ROOT=true\)/ },
  { name: 'a symlink to /', root: rootLink, why: /link-to-slash \(real path \/\) is refused: it is the file system root/ },
  { name: '$HOME', root: home, env: { HOME: home }, why: /is refused: it is the home directory.*--allow-broad-root/ },
  { name: 'a folder containing $HOME', root: base, env: { HOME: home }, why: /is refused: it contains the home directory/ },
  { name: '/etc', root: '/etc', why: /\/etc is refused: it is the system folder \/etc.*--allow-broad-root/ },
  { name: '/tmp itself', root: '/tmp', why: /is refused: it is the system folder/ }
]

for (const command of ['stdio', 'serve']) {
  const extra = command === 'serve' ? ['--host', '127.0.0.1', '--port', '0'] : []
  for (const c of refused) {
    t.test(`${command} --root <${c.name}>: exit 2, naming the flag and what is wrong`, async (t) => {
      const run = await runBin([command, '--root', c.root, ...extra], { env: c.env })

      t.equal(run.code, 2, run.stderr)
      t.match(run.stderr, FLAG)
      t.match(run.stderr, c.why)
      t.notMatch(run.stderr, /ENOENT|ENOTDIR|realpath/, 'words, not a raw errno')
      t.equal(run.stdout, '', 'nothing was served')
    })
  }
}

t.test('started from / with no --root, stdio and serve refuse and say the root is the current directory', async (t) => {
  for (const args of [['stdio'], ['serve', '--port', '0']]) {
    const run = await runBin(args, { cwd: '/', env: { WORKSPACE_MCP_ROOT: '' } })
    t.equal(run.code, 2, `${args[0]}: ${run.stderr}`)
    t.match(run.stderr, /the current directory \/ \(no --root given\) is refused: it is the file system root/)
  }
})

t.test('WORKSPACE_MCP_ROOT is checked like --root', async (t) => {
  const run = await runBin(['stdio'], { env: { WORKSPACE_MCP_ROOT: '/etc' } })

  t.equal(run.code, 2)
  t.match(run.stderr, /\/etc is refused/)
})

t.test('a root the server cannot list is exit 2', { skip: process.platform === 'win32' ? 'POSIX permissions only' : false }, async (t) => {
  // chmod 000 means nothing to uid 0, so the bin runs as nobody when the tests run as root.
  const run = await runBin(['stdio', '--root', locked], asRoot ? { uid: NOBODY } : {})

  t.equal(run.code, 2, run.stderr)
  t.match(run.stderr, FLAG)
  t.match(run.stderr, /locked cannot be listed: it is not accessible to this process \(permission denied\)/)
})

t.test('stdio --root / --allow-broad-root starts, warns, answers initialize and exits 0 on EOF', async (t) => {
  // tsc's output, for coverage: the only run of src/bin/stdio.ts's broad-root warning.
  const proc = spawnStdio(t, ['--root', '/', '--allow-broad-root'], {}, COVERED_CLI)
  proc.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'root-test', version: '1' } } })
  const init = await proc.response(1)
  proc.child.stdin.end()
  const exit = await proc.exited

  t.match(init, { result: { serverInfo: { name: 'workspace-mcp' } } })
  t.same(exit, { code: 0, signal: null })
  t.match(proc.stderr(), /"reason":"it is the file system root".*serving a broad root/)
})

t.test('WORKSPACE_MCP_ALLOW_BROAD_ROOT=true allows a symlink to / over stdio', async (t) => {
  const proc = spawnStdio(t, ['--root', rootLink], { WORKSPACE_MCP_ALLOW_BROAD_ROOT: 'true' })
  proc.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'root-test', version: '1' } } })

  t.match(await proc.response(1), { result: { protocolVersion: '2025-11-25' } })
  proc.child.stdin.end()
  t.same(await proc.exited, { code: 0, signal: null })
})

t.test('serve --root / --allow-broad-root listens and logs a warning', async (t) => {
  // tsc's output, for coverage: the only run of src/bin/http.ts's broad-root warning.
  const server = await spawnHttp(t, ['--root', '/', '--allow-broad-root'], {}, COVERED_CLI)

  t.match(server.url, /^http:\/\/127\.0\.0\.1:\d+\/mcp$/)
  t.match(server.output(), /"level":40.*serving a broad root/)
})

t.test('a project inside $HOME is an ordinary root', async (t) => {
  const proc = spawnStdio(t, ['--root', join(home, 'project')], { HOME: home })
  proc.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'root-test', version: '1' } } })

  t.match(await proc.response(1), { result: {} })
  proc.child.stdin.end()
  t.same(await proc.exited, { code: 0, signal: null })
  t.notMatch(proc.stderr(), /broad root/)
})

t.test('the offline commands need an existing root but print for a broad one', async (t) => {
  const missing = await runBin(['tools', '--root', join(base, 'no-such-folder')])
  const slash = await runBin(['tools', '--root', '/'])

  t.equal(missing.code, 2)
  t.match(missing.stderr, FLAG)
  t.equal(slash.code, 0, slash.stderr)
  t.match(slash.stdout, /^list_directory /)
})
