import t from 'tap'
import { spawn } from 'node:child_process'
import { chmodSync, mkdirSync, mkdtempSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { childEnv, CLI, cliCommand, COVERED_CLI } from '../helpers/spawn-stdio.js'
import { httpCommandInProcess, stdioCommandInProcess } from '../helpers/in-process.js'
import { runCli } from '../helpers/cli.js'
import { checkRoot } from '../../src/root-check.js'
import { loadConfig } from '../../src/base/config.js'

// The root is checked at boot by both serving commands: a root that is missing, not a folder or not
// listable, and a broad one (/, home, system folder) without --allow-broad-root, is exit 2 with a
// message naming --root / WORKSPACE_MCP_ROOT. The refusals run in-process (the check comes before anything
// starts); the serving commands run in-process too; the bin is spawned where the process is the point: its exit code, another user.

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
const FLAG = /--root \/ WORKSPACE_MCP_ROOT/

interface Run { code: number | null, signal: NodeJS.Signals | null, stderr: string, stdout: string }

/** Runs the built bin to its exit (SIGKILL after 20 s, so a server that starts anyway fails the test). */
function runBin (args: string[], opts: { env?: NodeJS.ProcessEnv, cwd?: string, uid?: number } = {}, cli = CLI): Promise<Run> {
  const { command, args: argv } = cliCommand(cli, args)
  const child = spawn(command, argv, {
    env: childEnv(cli, opts.env),
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

/** Runs `fn` with these environment variables (and working directory) in place of this process's, then restores them. */
async function withEnv<T> (env: NodeJS.ProcessEnv, cwd: string | undefined, fn: () => Promise<T>): Promise<T> {
  const saved = Object.fromEntries(Object.keys(env).map(key => [key, process.env[key]]))
  const savedCwd = process.cwd()
  Object.assign(process.env, env)
  if (cwd !== undefined) process.chdir(cwd)
  try {
    return await fn()
  } finally {
    for (const [key, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[key]
      else process.env[key] = value
    }
    process.chdir(savedCwd)
  }
}

// In-process, as src/cli.ts runs the commands: the check comes before anything is started or written.
for (const command of ['stdio', 'serve']) {
  const extra = command === 'serve' ? ['--host', '127.0.0.1', '--port', '0'] : []
  for (const c of refused) {
    t.test(`${command} --root <${c.name}>: exit 2, naming the flag and what is wrong`, async (t) => {
      const run = await withEnv(c.env ?? {}, undefined, async () => await runCli([command, '--root', c.root, ...extra]))

      t.equal(run.status, 2, run.stderr)
      t.match(run.stderr, FLAG)
      t.match(run.stderr, c.why)
      t.notMatch(run.stderr, /ENOENT|ENOTDIR|realpath/, 'words, not a raw errno')
      t.equal(run.stdout, '', 'nothing was served')
    })
  }
}

t.test('the bin itself (tsc\'s output, for coverage of src/cli.ts): a refused root is exit 2 with the reason on stderr', async (t) => {
  const run = await runBin(['stdio', '--root', '/'], {}, COVERED_CLI)

  t.equal(run.code, 2, run.stderr)
  t.match(run.stderr, /^workspace-mcp: .*\/ is refused: it is the file system root/)
  t.equal(run.stdout, '')
})

t.test('started from / with no --root, stdio and serve refuse and say the root is the current directory', async (t) => {
  for (const args of [['stdio'], ['serve', '--port', '0']]) {
    const run = await withEnv({ WORKSPACE_MCP_ROOT: '' }, '/', async () => await runCli(args))
    t.equal(run.status, 2, `${args[0]}: ${run.stderr}`)
    t.match(run.stderr, /the current directory \/ \(no --root given\) is refused: it is the file system root/)
  }
})

t.test('WORKSPACE_MCP_ROOT is checked like --root', async (t) => {
  const run = await withEnv({ WORKSPACE_MCP_ROOT: '/etc' }, undefined, async () => await runCli(['stdio']))

  t.equal(run.status, 2)
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
  // No code index: a scan of the whole machine is not what this test is about.
  const proc = stdioCommandInProcess(t, ['--root', '/', '--allow-broad-root', '--code-index', 'off'])
  proc.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'root-test', version: '1' } } })
  const init = await proc.response(1)
  proc.input.end()

  t.match(init, { result: { serverInfo: { name: 'workspace-mcp' } } })
  t.equal(await proc.exitWithin(10_000), 0)
  t.match(proc.logs(), /"reason":"it is the file system root".*serving a broad root/)
})

t.test('WORKSPACE_MCP_ALLOW_BROAD_ROOT=true allows a symlink to /; a project inside $HOME is an ordinary root', async (t) => {
  const allowed = { WORKSPACE_MCP_ALLOW_BROAD_ROOT: 'true' }
  t.equal(checkRoot(loadConfig({ root: rootLink }, allowed), { refuseBroad: true, env: allowed }), 'it is the file system root', 'allowed, and the reason kept for the warning')
  const env = { HOME: home }
  t.equal(checkRoot(loadConfig({ root: join(home, 'project') }, env), { refuseBroad: true, env }), undefined, 'nothing to warn of')
})

t.test('serve --root / --allow-broad-root listens and logs a warning', async (t) => {
  const server = await httpCommandInProcess(t, ['--root', '/', '--allow-broad-root', '--code-index', 'off'])

  t.match(server.url, /^http:\/\/127\.0\.0\.1:\d+$/)
  t.match(server.logs(), /"level":40.*serving a broad root/)
})

t.test('the offline commands need an existing root but print for a broad one', async (t) => {
  const missing = await runCli(['tools', '--root', join(base, 'no-such-folder')])
  const slash = await runCli(['tools', '--root', '/', '--code-index', 'off'])

  t.equal(missing.status, 2)
  t.match(missing.stderr, FLAG)
  t.equal(slash.status, 0, slash.stderr)
  t.match(slash.stdout, /^list_directory /)
})
