import t from 'tap'
import fs from 'node:fs'
import path from 'node:path'
import { createConfigFile } from '../../src/services/config-file.js'

// An operator-configured file (the docs overlay): read as is outside the root, through the jail inside it.

t.test('outside the root: read and versioned as is; a missing file has neither', async (t) => {
  const dir = t.testdir({ 'tools.yaml': 'tools: {}\n' })
  const file = createConfigFile(path.join(dir, 'tools.yaml'))
  const missing = createConfigFile(path.join(dir, 'none.yaml'))

  t.equal(file.read(), 'tools: {}\n')
  t.match(file.version(), /^\d+(\.\d+)?:10:\d+$/)
  t.equal(missing.read(), undefined)
  t.equal(missing.version(), undefined)
})

t.test('inside the root: a file reached through a folder link out of the root, or a folder, is not read', async (t) => {
  const base = fs.realpathSync(t.testdir({ root: { docs: { 'tools.yaml': 'mine' }, folder: {} }, outside: { 'tools.yaml': 'SECRET' } }))
  const root = path.join(base, 'root')
  fs.symlinkSync(path.join(base, 'outside'), path.join(root, 'linked'))

  t.equal(createConfigFile(path.join(root, 'docs', 'tools.yaml'), root).read(), 'mine')
  t.equal(createConfigFile(path.join(root, 'linked', 'tools.yaml'), root).read(), undefined, 'its descriptor is outside')
  t.equal(createConfigFile(path.join(root, 'folder'), root).read(), undefined)
  t.equal(createConfigFile(path.join(base, 'outside', 'tools.yaml'), root).read(), 'SECRET', 'the operator may name a file outside the root')
})

t.test('a file over 4 MiB is not read (an overlay is kilobytes)', async (t) => {
  const dir = t.testdir({})
  fs.writeFileSync(path.join(dir, 'huge.yaml'), Buffer.alloc(4 * 1024 * 1024 + 1, 0x61))

  t.equal(createConfigFile(path.join(dir, 'huge.yaml')).read(), undefined)
})

t.test('without /proc a jailed file is still read (no-follow open, regular file); a file that shrinks reads short', async (t) => {
  const real = await import('node:fs')
  let readCalls = 0
  const { createConfigFile: createWithoutProc } = await t.mockImport<typeof import('../../src/services/config-file.js')>('../../src/services/config-file.js', {
    'node:fs': {
      ...real,
      readlinkSync: (p: string) => {
        if (p.startsWith('/proc/')) throw Object.assign(new Error('ENOENT'), { code: 'ENOENT' })
        return real.readlinkSync(p)
      },
      // The second read call finds the end early, as after a truncation between fstat and read.
      readSync: (fd: number, buffer: Buffer, offset: number, _length: number, position: number) => ++readCalls > 1 ? 0 : real.readSync(fd, buffer, offset, 3, position)
    }
  })
  const base = fs.realpathSync(t.testdir({ root: { 'tools.yaml': 'abcdef' }, outside: { 'tools.yaml': 'SECRET' } }))
  const root = path.join(base, 'root')
  fs.symlinkSync(path.join(base, 'outside'), path.join(root, 'linked'))

  t.equal(createWithoutProc(path.join(root, 'tools.yaml'), root).read(), 'abc')
  t.equal(createWithoutProc(path.join(root, 'linked', 'tools.yaml'), root).read(), undefined, 'a folder link out of the root is refused without /proc too')
})
