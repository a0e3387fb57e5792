import t, { type Test } from 'tap'
import fs from 'node:fs'
import * as fsp from 'node:fs/promises'
import net from 'node:net'
import path from 'node:path'
import pino from 'pino'
import { createWorkspace, kindOf } from '../../../src/services/workspace/workspace.js'
import { createHostileWorkspace, toolCodeOf } from '../../helpers/workspace-fixture.js'

// How the jail answers the file system's own failures, special files, odd rule files and a vanished
// /proc: every one becomes the tool error (or the walk note) a model can act on, and none crosses the root.

const log = pino({ level: 'silent' })

async function setup (t: Test) {
  const fx = createHostileWorkspace(t, { big: false })
  const ws = await createWorkspace({ root: fx.root, log })
  return { fx, ws }
}

const errnoError = (code: string): Error => Object.assign(new Error(code), { code })

t.test('kindOf names every kind of entry from its own stat', async (t) => {
  const stat = (kind: string) => ({
    isSymbolicLink: () => kind === 'symlink',
    isFile: () => kind === 'file',
    isDirectory: () => kind === 'dir',
    isFIFO: () => kind === 'fifo',
    isSocket: () => kind === 'socket',
    isBlockDevice: () => kind === 'block',
    isCharacterDevice: () => kind === 'char'
  })
  for (const kind of ['symlink', 'file', 'dir', 'fifo', 'socket']) t.equal(kindOf(stat(kind)), kind)
  t.equal(kindOf(stat('block')), 'device')
  t.equal(kindOf(stat('char')), 'device')
  t.equal(kindOf(stat('none')), 'other')
})

t.test('fsError maps each errno to the tool error for the path as shown, and rethrows the unknown', async (t) => {
  const { ws } = await setup(t)
  const cases: Record<string, string> = { EACCES: 'PERMISSION_DENIED', EPERM: 'PERMISSION_DENIED', ENOENT: 'PATH_NOT_FOUND', ELOOP: 'INVALID_PATH', ENAMETOOLONG: 'INVALID_PATH', ENOTDIR: 'NOT_A_DIRECTORY', EINVAL: 'INVALID_PATH' }

  for (const [code, tool] of Object.entries(cases)) {
    const err = ws.fsError(errnoError(code), 'src/a.ts', 'files[2].path')
    t.equal(err.toolCode, tool, code)
    t.match(err.message, /src\/a\.ts/)
  }
  t.match(ws.fsError(errnoError('EACCES'), 'x', 'files[2].path'), { next: { step: 'describe-path', path: 'x', field: 'files[2].path' } }, 'the next step names the field')
  t.throws(() => ws.fsError(errnoError('EIO'), 'x'), { code: 'EIO' }, 'an errno with no meaning for the model is rethrown (and masked by dispatch)')
})

t.test('resolve: a non-string path is INVALID_PATH; a missing link target that climbs out is an escape', async (t) => {
  const { fx, ws } = await setup(t)
  fs.symlinkSync('nope/../../../outside/secret.txt', path.join(fx.root, 'climbs'))

  t.equal(await toolCodeOf(ws.resolve(42 as unknown as string)), 'INVALID_PATH')
  const encoded = await ws.resolve(`file://${fx.root}/a%0Ab`).catch((e: Error) => e)
  t.match(encoded, { toolCode: 'INVALID_PATH', message: /control character \\u000a/ }, 'a control character encoded in a file:// URL is refused like a raw one')
  t.equal(await toolCodeOf(ws.resolve('climbs', { mustExist: false })), 'SYMLINK_ESCAPES_ROOT')
  t.equal(await toolCodeOf(ws.resolve('climbs')), 'SYMLINK_ESCAPES_ROOT')
})

t.test('stat of a path removed after it was resolved is PATH_NOT_FOUND', async (t) => {
  const { fx, ws } = await setup(t)
  fs.writeFileSync(path.join(fx.root, 'brief.txt'), 'x\n')
  const resolved = await ws.resolve('brief.txt')
  fs.rmSync(path.join(fx.root, 'brief.txt'))

  t.equal(await toolCodeOf(ws.stat(resolved, 'files[0].path')), 'PATH_NOT_FOUND')
})

t.test('readDirectory reports why a folder cannot be listed, by errno-like code', async (t) => {
  const { fx, ws } = await setup(t)
  const sock = path.join(fx.root, 'sock')
  // The fixture lives under os.tmpdir(): short enough for a socket path (sun_path holds 108 bytes).
  const server = net.createServer().listen(sock)
  t.teardown(() => server.close())
  await new Promise(resolve => server.once('listening', resolve))
  const codeOfListing = (relative: string): Promise<string | undefined> =>
    ws.readDirectory({ relative, fsPath: path.join(fx.root, relative) }).then(() => 'listed', (err: { code?: string }) => err.code)

  t.equal(await codeOfListing('sock'), 'ENOTDIR', 'a socket is never opened')
  t.equal(await codeOfListing('README.md'), 'ENOTDIR', 'a regular file')
  t.equal(await codeOfListing('link-to-outside-dir'), 'ESCAPED', 'a link in place of the folder is not followed')
  t.equal(await codeOfListing('gone'), 'ENOENT')
  t.equal(await codeOfListing('src'), 'listed')
})

t.test('a folder whose own name is not UTF-8 lists its odd children by bytes', async (t) => {
  const { fx, ws } = await setup(t)
  const dirBytes = Buffer.concat([Buffer.from(fx.root + '/odd-'), Buffer.from([0xfe])])
  fs.mkdirSync(dirBytes)
  fs.writeFileSync(Buffer.concat([dirBytes, Buffer.from('/child-'), Buffer.from([0xff])]), 'x\n')

  const dir = await ws.resolve('odd-\\xfe')
  const entries = await ws.readDirectory(dir)

  t.strictSame(entries.map(e => e.relative), ['odd-\\xfe/child-\\xff'])
  t.ok(Buffer.isBuffer(entries[0].fsPath))
  t.equal(fs.readFileSync(entries[0].fsPath, 'utf8'), 'x\n')
})

t.test('linkTarget: a link through a file is broken, a link whose target name is too long is unreadable', async (t) => {
  const { fx, ws } = await setup(t)
  fs.symlinkSync('README.md/inner', path.join(fx.root, 'through-file'))
  fs.symlinkSync('n'.repeat(300), path.join(fx.root, 'long-name'))

  fs.symlinkSync('nope/../../../outside/secret.txt', path.join(fx.root, 'climbs'))

  t.same(await ws.linkTarget({ relative: 'through-file', fsPath: path.join(fx.root, 'through-file') }), { state: 'broken' })
  t.same(await ws.linkTarget({ relative: 'climbs', fsPath: path.join(fx.root, 'climbs') }), { state: 'outside' }, 'a dangling link whose text climbs out')
  t.same(await ws.linkTarget({ relative: 'outside', fsPath: fx.outside }), { state: 'outside' }, 'a link path outside the root is never looked at')
  t.same(await ws.linkTarget({ relative: 'long-name', fsPath: path.join(fx.root, 'long-name') }), { state: 'unreadable' })
})

t.test('rule files: one that is a link inside is followed through the jail; a link out, or a folder, gives no rules', async (t) => {
  const { fx, ws } = await setup(t)
  fs.mkdirSync(path.join(fx.root, 'linked'))
  fs.writeFileSync(path.join(fx.root, 'rules.txt'), '*.tmp\n')
  fs.symlinkSync('../rules.txt', path.join(fx.root, 'linked', '.gitignore'))
  fs.writeFileSync(path.join(fx.root, 'linked', 'a.tmp'), 'x')
  fs.mkdirSync(path.join(fx.root, 'escaping'))
  fs.writeFileSync(path.join(fx.outside, 'rules'), '*.md\n')
  fs.symlinkSync(path.join(fx.outside, 'rules'), path.join(fx.root, 'escaping', '.gitignore'))
  fs.mkdirSync(path.join(fx.root, 'foldered', '.ignore'), { recursive: true })
  fs.writeFileSync(path.join(fx.root, 'top-rules'), 'scratch/\n*.bak\n')
  fs.rmSync(path.join(fx.root, '.ignore'))
  fs.symlinkSync('top-rules', path.join(fx.root, '.ignore'))

  t.equal(await ws.isIgnored('linked/a.tmp', false), true, 'rules read through an inside link apply')
  t.equal(await ws.isIgnored('escaping/notes.md', false), false, 'rules behind a link out of the root are never read')
  t.equal(await ws.isIgnored('foldered/x.txt', false), false, 'a folder named like a rule file holds no rules')
  t.equal(await ws.isIgnored('old.bak', false), true, 'the root\'s own rule file may be a link inside too')
})

t.test('without /proc the descriptor check walks the path again and compares the inode', async (t) => {
  // What macOS does: no /proc/self/fd, so open-verified falls back to a fresh no-follow walk.
  let swap: (() => void) | undefined
  const fsWithoutProc = {
    ...fsp,
    readlink: async (p: string, options?: { encoding?: BufferEncoding | 'buffer' }) => {
      if (String(p).startsWith('/proc/')) throw errnoError('ENOENT')
      return await fsp.readlink(p, options as { encoding: 'buffer' })
    },
    open: async (...args: Parameters<typeof fsp.open>) => {
      const handle = await fsp.open(...args)
      // The race a writer wins between the open and the check: here, deterministically.
      swap?.()
      swap = undefined
      return handle
    }
  }
  const fsOps = await t.mockImport('../../../src/services/workspace/fs-ops.js', { 'node:fs/promises': fsWithoutProc })
  const { createWorkspace: createWithoutProc } = await t.mockImport<typeof import('../../../src/services/workspace/workspace.js')>('../../../src/services/workspace/workspace.js', {
    '../../../src/services/workspace/fs-ops.js': fsOps
  })
  const fx = createHostileWorkspace(t, { big: false })
  const ws = await createWithoutProc({ root: fx.root, log })
  fs.writeFileSync(path.join(fx.root, 'doc.txt'), 'inside\n')

  const handle = await ws.openFile(await ws.resolve('doc.txt'))
  t.equal((await handle.readFile('utf8')), 'inside\n', 'an undisturbed file reads as usual')
  await handle.close()
  t.ok((await ws.readDirectory(await ws.resolve('src'))).length > 0, 'folders list as usual')
  t.ok((await ws.readDirectory(await ws.resolve('.'))).length > 0, 'the root too')
  const pinned = await ws.pin(await ws.resolve('src'))
  t.equal(pinned.procPath, path.join(fx.root, 'src'), 'a child process gets the checked path itself')
  await pinned.close()

  const resolved = await ws.resolve('doc.txt')
  swap = () => { fs.renameSync(path.join(fx.root, 'doc.txt'), path.join(fx.root, 'moved.txt')); fs.writeFileSync(path.join(fx.root, 'doc.txt'), 'other\n') }
  t.equal(await toolCodeOf(ws.openFile(resolved)), 'SYMLINK_ESCAPES_ROOT', 'replaced after the open: refused')
  swap = () => { fs.rmSync(path.join(fx.root, 'moved.txt')) }
  const moved = await ws.resolve('moved.txt')
  t.equal(await toolCodeOf(ws.openFile(moved)), 'SYMLINK_ESCAPES_ROOT', 'removed after the open: refused')
})

t.test('a workspace over / lists its entries with their plain paths', async (t) => {
  const ws = await createWorkspace({ root: '/', log })

  const entries = await ws.readDirectory(await ws.resolve('.'))

  t.ok(entries.some(e => e.relative === 'etc' && e.fsPath === '/etc'))
})
