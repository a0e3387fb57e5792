import t from 'tap'
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import * as fsp from 'node:fs/promises'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { promiseFs, syncFs } from '../../../src/services/workspace/fs-ops.js'
import { openVerified, readVerified, type Containment } from '../../../src/services/workspace/open-verified.js'
import type { FsOps, Handle } from '../../../src/services/workspace/entry-types.js'

// The verified open on its own: what it refuses before opening, what it catches after, and the races
// between its lstat and its open that only a writer changing the tree at that moment can produce.

const inside = (root: string): Containment => ({ inside: real => real === root || real.startsWith(root + '/') })

// The promise calls serve requests, the synchronous ones the index's own walk: the same checks hold for both.
for (const [driver, fs_] of [['promises', promiseFs], ['sync', syncFs]] as const) {
  t.test(`${driver}: a regular file and a folder open; a FIFO is refused before opening; a missing path is an error`, async (t) => {
    const dir = fs.realpathSync(t.testdir({ 'a.txt': 'hello\n', sub: {} }))
    execFileSync('mkfifo', [path.join(dir, 'pipe')])

    const file = await openVerified(path.join(dir, 'a.txt'), inside(dir), fs_)
    const folder = await openVerified(path.join(dir, 'sub'), inside(dir), fs_)
    const pipe = await openVerified(path.join(dir, 'pipe'), inside(dir), fs_)
    const missing = await openVerified(path.join(dir, 'none'), inside(dir), fs_)

    t.match(file, { ok: true, opened: { procPath: /^\/proc\/\d+\/fd\/\d+$/ } })
    t.match(folder, { ok: true })
    t.same(pipe, { ok: false, reason: 'special', code: 'ESPECIAL' })
    t.same(missing, { ok: false, reason: 'error', code: 'ENOENT' })
    for (const r of [file, folder]) if (r.ok) await r.opened.handle.close()
    const stats = await fs_.lstatEach([path.join(dir, 'a.txt'), path.join(dir, 'none'), path.join(dir, 'sub')])
    t.same(stats.map(s => s?.isDirectory()), [false, undefined, true], 'lstat of several paths: one that fails is undefined, in place')
  })

  t.test(`${driver}: a descriptor whose real path is outside is closed and refused`, async (t) => {
    const dir = fs.realpathSync(t.testdir({ 'a.txt': 'x' }))

    const result = await openVerified(path.join(dir, 'a.txt'), { inside: () => false }, fs_)

    t.same(result, { ok: false, reason: 'escaped', code: 'ESCAPED' })
  })

  t.test(`${driver}: races between the lstat and the open: a file swapped for a FIFO or a socket is never read`, async (t) => {
    // A short folder: a socket path must fit in sun_path (108 bytes), which tap's fixture paths do not.
    const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'ov-')))
    t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }))
    for (const name of ['fifo.txt', 'sock.txt']) fs.writeFileSync(path.join(dir, name), 'x')
    let before: ((p: string) => Promise<void>) | undefined
    // Whatever the driver, the check after opening catches what changed after its lstat.
    const racing: FsOps = {
      ...fs_,
      open: async (p, flags) => {
        await before?.(String(p))
        return await fs_.open(p, flags)
      }
    }
    const servers: net.Server[] = []
    t.teardown(() => { for (const s of servers) s.close() })

    before = async (p) => { fs.rmSync(p); execFileSync('mkfifo', [p]) }
    const fifo = await openVerified(path.join(dir, 'fifo.txt'), inside(dir), racing)
    before = async (p) => {
      fs.rmSync(p)
      const server = net.createServer().listen(p)
      servers.push(server)
      await new Promise(resolve => server.once('listening', resolve))
    }
    const sock = await openVerified(path.join(dir, 'sock.txt'), inside(dir), racing)

    t.same(fifo, { ok: false, reason: 'special', code: 'ESPECIAL' }, 'opened without blocking, then refused by its fstat')
    t.same(sock, { ok: false, reason: 'special', code: 'ENXIO' }, 'a socket cannot be opened at all')
  })
}

t.test('readVerified reads up to maxBytes, and gives nothing for a larger file (half a rule set would be wrong)', async (t) => {
  const dir = t.testdir({ 'small.txt': 'abc', 'big.txt': 'x'.repeat(10) })
  const small = await fsp.open(path.join(dir, 'small.txt'))
  const big = await fsp.open(path.join(dir, 'big.txt'))
  t.teardown(async () => { await small.close(); await big.close() })

  t.equal(await readVerified(small, 5), 'abc')
  t.equal(await readVerified(big, 10), 'x'.repeat(10), 'exactly the limit is fine')
  t.equal(await readVerified(big, 9), undefined)
})

t.test('readVerified reads a file that grew after its fstat whole, still up to maxBytes', async (t) => {
  const dir = t.testdir({ 'growing.txt': 'ab' })
  const file = path.join(dir, 'growing.txt')
  // The file grows between the size readVerified asks for and its reads: the buffer must grow with it.
  const growing = async (grownTo: string): Promise<Handle> => {
    await fsp.writeFile(file, 'ab')
    const handle = await fsp.open(file)
    t.teardown(() => handle.close())
    return {
      fd: handle.fd,
      stat: async () => {
        const stats = await handle.stat()
        await fsp.writeFile(file, grownTo)
        return stats
      },
      read: async (...args) => await handle.read(...args),
      close: async () => {}
    }
  }
  t.equal(await readVerified(await growing('a'.repeat(40)), 100), 'a'.repeat(40), 'read past the size it had')
  t.equal(await readVerified(await growing('a'.repeat(40)), 40), 'a'.repeat(40), 'exactly the limit after growing')
  t.equal(await readVerified(await growing('a'.repeat(41)), 40), undefined, 'past the limit after growing')
})
