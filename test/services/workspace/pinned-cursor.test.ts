import t, { type Test } from 'tap'
import fs from 'node:fs'
import path from 'node:path'
import { pathCursor, walkBeneath, type Cursor, type Walked } from '../../../src/services/workspace/beneath.js'
import { promiseFs } from '../../../src/services/workspace/fs-ops.js'
import { pinnedCursor } from '../../../src/services/workspace/pinned-cursor.js'
import type { FsOps } from '../../../src/services/workspace/entry-types.js'

// The walk beneath the root over descriptors: it finds what the walk by path finds, and keeps finding it while a
// folder it has entered is swapped for a link to the outside, where the walk by path follows the link.

const skip = process.platform === 'linux' ? false : 'reads /proc/self/fd'

/** A tree with every kind of path a walk meets: folders, a file, links inside (relative, absolute, up), out, in a loop. */
function tree (t: Test): { root: string, outside: string } {
  const base = fs.realpathSync(t.testdir({ root: { src: { 'index.ts': 'x', sub: { 'a.txt': 'a' } }, empty: {} }, outside: { 'secret.txt': 's', 'index.ts': 'outside' } }))
  const root = path.join(base, 'root')
  fs.symlinkSync('src/sub', path.join(root, 'rel'))
  fs.symlinkSync(path.join(root, 'src'), path.join(root, 'abs'))
  fs.symlinkSync('..', path.join(root, 'src', 'up'))
  fs.symlinkSync(path.join(base, 'outside'), path.join(root, 'out'))
  fs.symlinkSync('loop-b', path.join(root, 'loop-a'))
  fs.symlinkSync('loop-a', path.join(root, 'loop-b'))
  fs.symlinkSync('nowhere', path.join(root, 'dangling'))
  // A name that is not UTF-8: reached as bytes through /proc too.
  fs.writeFileSync(Buffer.concat([Buffer.from(`${root}/caf`), Buffer.from([0xe9])]), 'latin1 name')
  return { root, outside: path.join(base, 'outside') }
}

/** What a walk says, without the stats object (compared by inode). */
const shape = (w: Walked): unknown => w.state === 'found' ? { state: w.state, real: w.real, ino: w.stats.ino, last: w.last } : w

t.test('a pinned walk finds what the walk by path finds, for every kind of path, and leaves no descriptor open', { skip }, async (t) => {
  const { root } = tree(t)
  const paths = ['', 'src', 'src/index.ts', 'src/sub/a.txt', 'rel', 'rel/a.txt', 'abs/index.ts', 'src/up/src/sub', 'src/up/..', 'src/..',
    'out', 'out/secret.txt', 'loop-a', 'dangling', 'missing/deeper', 'src/index.ts/x', 'empty', 'src/sub/../index.ts', 'caf\xe9', 'abs/up/rel']
  const before = fs.readdirSync('/proc/self/fd').length

  for (const p of paths) {
    for (const follow of [false, true]) {
      const components = p === '' ? [] : p.split('/')
      const cursor = await pinnedCursor(root, promiseFs)
      t.ok(cursor !== undefined)
      const pinned = await walkBeneath(root, components, follow, cursor)
      await cursor?.close()
      t.same(shape(pinned), shape(await walkBeneath(root, components, follow)), `${JSON.stringify(p)} follow=${follow}`)
    }
  }
  t.equal(fs.readdirSync('/proc/self/fd').length, before, 'every folder it opened is closed')
})

t.test('a folder swapped for a link to the outside after the walk entered it: the pinned walk stays inside, the walk by path follows the link', { skip }, async (t) => {
  const { root, outside } = tree(t)
  const swapAfterEnter = (cursor: Cursor): Cursor => ({
    ...cursor,
    async enter (name) {
      await cursor.enter(name)
      // The attacker, at the worst moment: right after the walk stepped into src.
      fs.renameSync(path.join(root, 'src'), path.join(root, 'src.aside'))
      fs.symlinkSync(outside, path.join(root, 'src'))
    }
  })
  const insideIno = fs.statSync(path.join(root, 'src', 'index.ts')).ino
  const restore = (): void => { fs.rmSync(path.join(root, 'src')); fs.renameSync(path.join(root, 'src.aside'), path.join(root, 'src')) }

  const cursor = await pinnedCursor(root, promiseFs)
  const pinned = await walkBeneath(root, ['src', 'index.ts'], false, swapAfterEnter(cursor as Cursor))
  await cursor?.close()
  restore()
  const byPath = await walkBeneath(root, ['src', 'index.ts'], false, swapAfterEnter(pathCursor(root)))
  restore()

  t.match(pinned, { state: 'found', stats: { ino: insideIno } }, 'the file in the folder it had entered')
  t.match(byPath, { state: 'found', stats: { ino: fs.statSync(path.join(outside, 'index.ts')).ino } }, 'by path, the outside file: what issue 40 found in get_file_info')
})

const errno = (code: string): Error => Object.assign(new Error(code), { code })

/** promiseFs with `open` answering `code` for paths ending in `suffix`. */
function failingOpen (suffix: string, code: string): FsOps {
  return {
    ...promiseFs,
    async open (p, flags) {
      if (String(p).endsWith(suffix)) throw errno(code)
      return await promiseFs.open(p, flags)
    }
  }
}

t.test('a folder that cannot be entered: gone is missing, no longer a folder is changed, anything else its own code', { skip }, async (t) => {
  const { root } = tree(t)
  const walk = async (fs_: FsOps): Promise<Walked> => {
    const cursor = await pinnedCursor(root, fs_)
    try {
      return await walkBeneath(root, ['src', 'sub', 'a.txt'], false, cursor)
    } finally {
      await cursor?.close()
    }
  }

  t.same(await walk(failingOpen('/sub', 'ENOENT')), { state: 'missing', real: path.join(root, 'src'), rest: ['sub', 'a.txt'], viaLink: false })
  t.same(await walk(failingOpen('/sub', 'ENOTDIR')), { state: 'error', code: 'EINVAL' }, 'a link now (O_DIRECTORY says ENOTDIR)')
  t.same(await walk(failingOpen('/sub', 'ELOOP')), { state: 'error', code: 'EINVAL' })
  t.same(await walk(failingOpen('/sub', 'EACCES')), { state: 'error', code: 'EACCES' })
})

t.test('no cursor where the root cannot be opened, or /proc does not name it; the root is closed again', { skip }, async (t) => {
  const { root } = tree(t)
  const opened: number[] = []
  const counting: FsOps = {
    ...promiseFs,
    async open (p, flags) {
      const handle = await promiseFs.open(p, flags)
      opened.push(handle.fd)
      return handle
    }
  }
  const stillOpen = (): number[] => opened.filter(fd => { try { return fs.readlinkSync(`/proc/self/fd/${fd}`) === root } catch { return false } })

  t.equal(await pinnedCursor(root, failingOpen(root, 'EACCES')), undefined, 'the root not readable: the walk by path says why')
  t.equal(await pinnedCursor(root, { ...counting, readlinkBytes: async () => { throw errno('ENOENT') } }), undefined, 'no /proc')
  t.equal(await pinnedCursor(root, { ...counting, readlinkBytes: async () => Buffer.from('/elsewhere') }), undefined, '/proc names another folder')
  t.equal(opened.length, 2)
  t.same(stillOpen(), [], 'the root was closed each time')
})
