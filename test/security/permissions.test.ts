import t, { type Test } from 'tap'
import { spawn } from 'node:child_process'
import { childEnv, CLI, cliCommand } from '../helpers/spawn-stdio.js'
import { createHostileWorkspace } from '../helpers/workspace-fixture.js'
import { uidOf } from '../helpers/proc.js'

// chmod 000 proves nothing as root (CI runs as root), so the server runs as `nobody` here: the
// built stdio bin is spawned with uid/gid 65534 over a world-readable fixture whose
// unreadable.txt and locked/ are mode 000.

const NOBODY = 65534
const asRoot = process.getuid?.() === 0

/** Spawns the stdio bin as a non-root user and returns a call(name, args) helper. */
async function serverAsNobody (t: Test, root: string) {
  const { command, args } = cliCommand(CLI, ['stdio', '--root', root, '--log-level', 'silent'])
  const child = spawn(command, args, {
    stdio: ['pipe', 'pipe', 'pipe'],
    env: childEnv(CLI),
    ...(asRoot ? { uid: NOBODY, gid: NOBODY } : {})
  })
  t.teardown(() => { if (child.exitCode === null) child.kill('SIGKILL') })
  const pending = new Map<number, (msg: Record<string, unknown>) => void>()
  let buffer = ''
  child.stdout.setEncoding('utf8')
  child.stdout.on('data', (chunk: string) => {
    buffer += chunk
    let nl: number
    while ((nl = buffer.indexOf('\n')) !== -1) {
      const msg = JSON.parse(buffer.slice(0, nl))
      buffer = buffer.slice(nl + 1)
      pending.get(msg.id)?.(msg)
    }
  })
  let id = 0
  const request = (method: string, params: Record<string, unknown>) => new Promise<Record<string, unknown>>((resolve, reject) => {
    const mine = ++id
    const guard = setTimeout(() => reject(new Error(`no answer to ${method}`)), 10_000)
    pending.set(mine, (msg) => { clearTimeout(guard); resolve(msg) })
    child.stdin.write(JSON.stringify({ jsonrpc: '2.0', id: mine, method, params }) + '\n')
  })
  await request('initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'perm', version: '1' } })
  child.stdin.write(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) + '\n')
  const call = async (name: string, args: Record<string, unknown>) => {
    const msg = await request('tools/call', { name, arguments: args })
    const result = msg.result as { content: Array<{ text: string }>, structuredContent?: Record<string, unknown>, isError?: boolean }
    return { text: result.content[0].text, structured: result.structuredContent, isError: result.isError === true }
  }
  return { call, pid: child.pid! }
}

t.test('unreadable files and folders are per-item PERMISSION_DENIED, the rest still works', { skip: process.platform === 'win32' ? 'POSIX permissions only' : false }, async (t) => {
  const fx = createHostileWorkspace(t, { big: false, permissions: true })
  const { call, pid } = await serverAsNobody(t, fx.root)
  t.not(process.platform === 'linux' ? uidOf(pid) : process.getuid?.(), 0, 'the server under test runs without root privileges')

  const read = await call('read_files', { files: [{ path: 'README.md' }, { path: 'unreadable.txt' }, { path: 'locked/inside.txt' }] })
  t.notOk(read.isError, 'one file was readable')
  t.match(read.text, /### README\.md — lines 1–3 of 3/)
  t.same((read.structured as { files: Array<{ error?: string }> }).files.map(f => f.error ?? 'ok'), ['ok', 'PERMISSION_DENIED', 'PERMISSION_DENIED'])
  t.notMatch(read.text, /unreadable\n/, 'the content of the unreadable file is not shown')

  const listed = await call('list_directory', { path: '.' })
  t.notOk(listed.isError)
  t.match(listed.text, /\nlocked\/ {2}\(unreadable: permission denied\)/)
  t.match(listed.text, /\nsrc\/ {2}\(3 entries\)/)
  t.match(listed.text, /\nunreadable\.txt {2}\d+ B/)

  const deep = await call('list_directory', { path: '.', depth: 3 })
  t.match(deep.text, /Note: locked\/: permission denied; its entries are not listed/)
  t.match(deep.text, /\n {2}util\/\n(?: {4}\S.*\n)* {4}helpers\.ts /)

  const lockedDir = await call('list_directory', { path: 'locked' })
  t.ok(lockedDir.isError)
  t.match(lockedDir.text, /^ERROR PERMISSION_DENIED/)

  const found = await call('find_files', { patterns: ['*.ts', '*.txt'] })
  t.notOk(found.isError)
  t.match(found.text, /Note: locked\/: permission denied/)
  t.match(found.text, /\nsrc\/app\.ts/)
  t.match(found.text, /\nunreadable\.txt/, 'names are still found; only contents are closed')

  const info = await call('get_file_info', { paths: ['unreadable.txt', 'locked', 'locked/inside.txt'] })
  t.match(info.text, /^unreadable\.txt — file, \d+ B, .*not readable: permission denied/)
  t.match(info.text, /\nlocked — directory, .*not listable: permission denied/)
  t.match(info.text, /\nlocked\/inside\.txt — ERROR PERMISSION_DENIED/)

  const searched = await call('search_regex', { pattern: 'unreadable' })
  t.notMatch(searched.text, /unreadable\.txt:1/, 'search never shows the unreadable file\'s lines')
})
