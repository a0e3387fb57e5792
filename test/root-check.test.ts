import t from 'tap'
import fc from 'fast-check'
import { runs } from './helpers/property.js'
import { execFileSync } from 'node:child_process'
import { chmodSync, existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { broadRootReason, checkRoot } from '../src/root-check.js'

// checkRoot in-process over the class of roots: every broad folder, reached directly or through a
// link, is refused without the override; any folder below a temp dir or below home is accepted.

const base = realpathSync(mkdtempSync(join(tmpdir(), 'wmcp-root-check-')))
const home = join(base, 'home')
mkdirSync(home)
const env = { HOME: home }
const serving = { refuseBroad: true, flags: { root: 'given' }, env }
const config = (root: string, allowBroadRoot = false) => ({ root, allowBroadRoot })

const SYSTEM = ['/etc', '/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32', '/var', '/proc', '/sys', '/dev', '/boot', '/root', '/opt', '/srv', '/run', '/tmp']
  .filter(p => existsSync(p))

t.test('every system folder that exists here, /, and home are broad; a link to one is refused by its real path', async (t) => {
  let links = 0
  for (const folder of ['/', ...SYSTEM, home]) {
    const link = join(base, `link-${links++}`)
    symlinkSync(folder, link)
    const reason = broadRootReason(realpathSync(folder), env)

    t.ok(reason, `${folder}: ${reason}`)
    t.throws(() => checkRoot(config(folder), serving), { code: 'APP_ERR_CONFIG_INVALID', message: /--root \/ WORKSPACE_MCP_ROOT.* is refused: .*--allow-broad-root/ }, folder)
    t.throws(() => checkRoot(config(link), serving), { message: new RegExp(`link-\\d+ \\(real path ${realpathSync(folder).replace(/[/.]/g, '\\$&')}\\) is refused`) }, `link to ${folder}`)
    t.equal(checkRoot(config(link, true), serving), reason, 'allowBroadRoot lets it through and returns the reason')
    t.equal(checkRoot(config(folder), { ...serving, refuseBroad: false }), undefined, 'the offline commands do not refuse it')
  }
})

t.test('any folder below a temp dir or below home is an ordinary root; any folder containing home is broad', async (t) => {
  const segment = fc.stringMatching(/^[A-Za-z0-9._ -]{1,12}$/).filter(s => s !== '.' && s !== '..')
  let n = 0
  fc.assert(fc.property(fc.boolean(), fc.array(segment, { minLength: 1, maxLength: 4 }), (underHome, segments) => {
    const top = underHome ? home : join(base, `case-${n++}`)
    const dir = join(top, ...segments)
    mkdirSync(dir, { recursive: true })
    const accepted = checkRoot(config(dir), serving)
    // Home moved inside the generated folder: now the folder contains it.
    let containing = 'accepted'
    try { checkRoot(config(dir), { ...serving, env: { HOME: join(dir, 'me') } }) } catch (err) { containing = (err as Error).message }
    return accepted === undefined && (underHome || /it contains the home directory/.test(containing))
  }), runs(60))
  t.pass('60 generated roots')
})

t.test('not a usable folder: missing, a file, under a file, a dangling link, a link loop — exit-2 errors in words', async (t) => {
  const file = join(base, 'file.txt')
  writeFileSync(file, 'x')
  symlinkSync(join(base, 'nowhere'), join(base, 'dangling'))
  symlinkSync(join(base, 'loop-b'), join(base, 'loop-a'))
  symlinkSync(join(base, 'loop-a'), join(base, 'loop-b'))
  const cases: Array<[string, RegExp]> = [
    [join(base, 'missing'), /missing does not exist$/],
    [file, /file\.txt is a regular file, not a folder/],
    [join(file, 'below'), /below does not exist \(a part of the path is a file, not a folder\)/],
    [join(base, 'dangling'), /dangling does not exist$/],
    [join(base, 'loop-a'), /loop-a is a loop of symbolic links/]
  ]
  for (const [root, why] of cases) {
    for (const refuseBroad of [true, false]) {
      t.throws(() => checkRoot(config(root, true), { ...serving, refuseBroad }), { code: 'APP_ERR_CONFIG_INVALID', message: why }, root)
      t.throws(() => checkRoot(config(root), { ...serving, refuseBroad }), { message: /^Invalid configuration: --root \/ WORKSPACE_MCP_ROOT: / })
    }
  }
})

t.test('special files are named by kind; impossible paths are described, not dumped', { skip: process.platform === 'win32' ? 'POSIX file kinds' : false }, async (t) => {
  const socket = join(base, 'sock')
  const server = createServer()
  await new Promise<void>(resolve => server.listen(socket, resolve))
  t.teardown(() => server.close())
  execFileSync('mkfifo', [join(base, 'fifo')])

  t.throws(() => checkRoot(config(socket), serving), { message: /sock is a socket, not a folder/ })
  t.throws(() => checkRoot(config(join(base, 'fifo')), serving), { message: /fifo is a named pipe, not a folder/ })
  t.throws(() => checkRoot(config('/dev/null'), serving), { message: /\/dev\/null is a device, not a folder/ })
  t.throws(() => checkRoot(config(join(base, 'x'.repeat(300))), serving), { message: /x is too long a path/ })
  t.throws(() => checkRoot(config(join(base, 'nul\0byte')), serving), { message: /byte cannot be opened \(ERR_INVALID_ARG_VALUE\)/ })
})

t.test('a folder this process cannot enter or list is refused, whoever runs the tests', { skip: process.platform === 'win32' ? 'POSIX permissions only' : false }, async (t) => {
  // Permission bits mean nothing to uid 0: as root, drop the effective uid to nobody for the checks.
  const asRoot = process.getuid?.() === 0
  const open = join(base, 'perm')
  mkdirSync(open)
  const closed = join(open, 'closed')
  const noSearch = join(open, 'no-search')
  mkdirSync(join(closed, 'inside'), { recursive: true })
  mkdirSync(noSearch)
  for (const dir of [base, open]) chmodSync(dir, 0o755)
  chmodSync(closed, 0o000)
  chmodSync(noSearch, 0o444)
  if (asRoot) process.seteuid?.(65534)
  try {
    t.throws(() => checkRoot(config(closed), serving), { message: /closed cannot be listed: it is not accessible to this process \(permission denied\)/ })
    t.throws(() => checkRoot(config(noSearch), serving), { message: /no-search cannot be listed: it is not accessible to this process \(permission denied\)/ })
    t.throws(() => checkRoot(config(join(closed, 'inside')), serving), { message: /inside is not accessible to this process \(permission denied\)/ })
  } finally {
    if (asRoot) process.seteuid?.(0)
    chmodSync(closed, 0o755)
    chmodSync(noSearch, 0o755)
  }
})

t.test('the Windows system folders are taken from the environment; HOME and env are optional', async (t) => {
  const programFiles = join(base, 'Program Files')
  const project = join(base, 'project')
  mkdirSync(programFiles)
  mkdirSync(project)

  t.throws(() => checkRoot(config(programFiles), { ...serving, env: { ...env, ProgramFiles: programFiles, SystemRoot: '' } }), { message: /is refused: it is the system folder .*Program Files/ })
  t.equal(checkRoot(config(project), { refuseBroad: true, flags: { root: project }, env: {} }), undefined, 'no HOME variable: os.homedir() alone')
  t.equal(checkRoot(config(project), { refuseBroad: true, flags: { root: project } }), undefined, 'process.env by default')
})

t.test('a defaulted root is named as the current directory', async (t) => {
  const missing = join(base, 'gone')
  t.throws(() => checkRoot(config(missing), { refuseBroad: true, flags: {}, env: { HOME: home } }), { message: /the current directory .*gone \(no --root given\) does not exist/ })
  t.throws(() => checkRoot(config(missing), { refuseBroad: true, flags: {}, env: { HOME: home, WORKSPACE_MCP_ROOT: missing } }), { message: new RegExp(`: ${missing.replace(/[/.]/g, '\\$&')} does not exist`) })
})

t.test('several roots: each is checked, named in the error; two names for one folder are refused', async (t) => {
  const a = join(base, 'multi-a')
  const b = join(base, 'multi-b')
  mkdirSync(a)
  mkdirSync(b)
  symlinkSync(a, join(base, 'multi-link'))
  const roots = (...entries: string[]) => ({ root: entries[0].split('=')[1], roots: entries, allowBroadRoot: false })
  t.equal(checkRoot(roots(`a=${a}`, `b=${b}`), serving), undefined)
  t.throws(() => checkRoot(roots(`a=${a}`, `gone=${join(base, 'multi-gone')}`), serving), { code: 'APP_ERR_CONFIG_INVALID', message: /multi-gone does not exist/ })
  t.throws(() => checkRoot(roots(`a=${a}`, `l=${join(base, 'multi-link')}`), serving), { code: 'APP_ERR_CONFIG_INVALID', message: /multi-link and .*multi-a are the same folder; give it once/ })
  t.throws(() => checkRoot(roots(`a=${a}`, 'etc=/etc'), serving), { message: /\/etc is refused: it is the system folder \/etc/ }, 'a broad root is refused whichever it is')
  t.equal(checkRoot({ ...roots(`a=${a}`, 'etc=/etc', 'usr=/usr'), allowBroadRoot: true }, serving), 'etc: it is the system folder /etc; usr: it is the system folder /usr')
  t.throws(() => checkRoot(roots(`a=${join(base, 'multi-gone')}`), { refuseBroad: true, flags: {}, env: { HOME: home, WORKSPACE_MCP_ROOTS: 'x' } }), { message: new RegExp(`: ${base.replace(/[/.]/g, '\\$&')}/multi-gone does not exist`) }, 'roots from the environment are given roots')
})

t.teardown(() => rmSync(base, { recursive: true, force: true }))
