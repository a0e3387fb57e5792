import fc from 'fast-check'
import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { createRescanMemory, MAX_RESCANNED_FOLDERS, rescannable, scanFolders } from '../../../src/services/code-index/index-rescan.js'
import { scanTree, scanWorkspace, type ScanResult } from '../../../src/services/code-index/index-scan.js'
import type { IndexedFile } from '../../../src/services/code-index/index-schema.js'
import { runs } from '../../helpers/property.js'

// A rescan of the folders a watch saw change must find exactly what a walk of the whole tree finds.

/** What the index holds after a scan of `root` found `found`: each changed file as it is on disk now, the rest kept. */
function indexAfter (held: IndexedFile[], found: ScanResult): IndexedFile[] {
  const kept = new Map(held.map(f => [f.path, f]))
  for (const gone of found.gone) kept.delete(gone)
  for (const { fsPath } of found.changed) {
    const stats = fs.statSync(fsPath)
    kept.set(fsPath, { path: fsPath, size: stats.size, mtimeMs: stats.mtimeMs })
  }
  return [...kept.values()]
}

const filesUnder = (held: IndexedFile[]) => (folder: string): IndexedFile[] => held.filter(f => f.path.startsWith(`${folder}/`))

const FOLDERS = ['a', 'a/b', 'a/b/c', 'd', 'd/e', 'ign', 'a/ign', 'f/g']
const NAMES = ['x.ts', 'y.c', 'z.py', 'n.md']
const op = fc.oneof(
  fc.record({ kind: fc.constant('write' as const), folder: fc.constantFrom('', ...FOLDERS), name: fc.constantFrom(...NAMES) }),
  fc.record({ kind: fc.constant('delete' as const), folder: fc.constantFrom('', ...FOLDERS), name: fc.constantFrom(...NAMES) }),
  fc.record({ kind: fc.constant('rmdir' as const), folder: fc.constantFrom(...FOLDERS), name: fc.constant('') })
)

t.test('a rescan of the folders the watch saw change finds what a whole walk finds: files new, grown or gone, folders made or removed', async (t) => {
  await fc.assert(fc.asyncProperty(fc.array(op, { maxLength: 8 }), fc.array(op, { minLength: 1, maxLength: 8 }), async (before, after) => {
    const root = fs.realpathSync(fs.mkdtempSync(path.join(t.testdirName.replace(/[^/]*$/, ''), 'rescan-')))
    try {
      fs.writeFileSync(path.join(root, '.gitignore'), 'ign/\n')
      const apply = (ops: typeof before, walked?: Set<string>): Map<string, Set<string>> => {
        const changes = new Map<string, Set<string>>()
        // The watched folder nearest above `target` sees its child on the way there change (what inotify reports).
        const seen = (target: string): void => {
          if (walked === undefined) return
          let child = target
          for (let folder = path.dirname(target); ; child = folder, folder = path.dirname(folder)) {
            if (walked.has(folder)) {
              changes.set(folder, new Set([...changes.get(folder) ?? [], path.basename(child)]))
              return
            }
            if (folder === root) return
          }
        }
        for (const { kind, folder, name } of ops) {
          const at = path.join(root, folder, name)
          if (kind === 'write') {
            fs.mkdirSync(path.dirname(at), { recursive: true })
            fs.appendFileSync(at, `int v${fs.existsSync(at) ? fs.statSync(at).size : 0};\n`)
          } else if (fs.existsSync(at)) {
            fs.rmSync(at, { recursive: true })
          } else {
            continue
          }
          seen(at)
        }
        return changes
      }
      apply(before)
      const first = await scanTree(await scanWorkspace([{ name: 'r', path: root }]), { size: 0, files: () => [] })
      const held = indexAfter([], first)
      const walked = new Set(first.folders)
      const changes = apply(after, walked)
      if (!rescannable(changes, walked)) return true
      const partial = await scanFolders(await scanWorkspace([{ name: 'r', path: root }]), changes, walked, { filesUnder: filesUnder(held), bytes: first.bytes })
      const whole = await scanTree(await scanWorkspace([{ name: 'r', path: root }]), { size: held.length, files: () => held })
      const sorted = (r: ScanResult): unknown => ({ changed: r.changed.map(c => c.relative).sort(), gone: [...r.gone].sort(), folders: [...r.folders].sort(), bytes: r.bytes })
      t.same(sorted(partial), sorted(whole))
      // False fails the property too: fast-check then prints the case and its seed.
      return JSON.stringify(sorted(partial)) === JSON.stringify(sorted(whole))
    } finally {
      fs.rmSync(root, { recursive: true, force: true })
    }
  }), runs(400))
})

t.test('what calls for a whole walk: a changed ignore file, a name the system did not give, a folder not walked, too many folders', async (t) => {
  const walked = new Set(['/r', '/r/a'])
  const one = (folder: string, ...names: string[]): Map<string, Set<string>> => new Map([[folder, new Set(names)]])
  t.ok(rescannable(one('/r/a', 'x.ts', 'y.c'), walked))
  t.notOk(rescannable(new Map(), walked), 'nothing seen: the watch may have missed it (a scan asked for by a call)')
  t.notOk(rescannable(one('/r/a', 'x.ts', '.gitignore'), walked))
  t.notOk(rescannable(one('/r', '.ignore'), walked))
  t.notOk(rescannable(one('/r/a', ''), walked))
  t.notOk(rescannable(one('/r/new', 'x.ts'), walked))
  const many = new Set(Array.from({ length: MAX_RESCANNED_FOLDERS + 1 }, (_, i) => `/r/${i}`))
  t.notOk(rescannable(new Map([...many].map(f => [f, new Set(['x.ts'])])), many))
})

t.test('a changed folder that is gone, or now a file, takes what was indexed below it', async (t) => {
  const root = fs.realpathSync(t.testdir({ a: { 'x.ts': 'let x\n', b: { 'y.ts': 'let y\n' } } }))
  const first = await scanTree(await scanWorkspace([{ name: 'r', path: root }]), { size: 0, files: () => [] })
  const held = indexAfter([], first)
  fs.rmSync(path.join(root, 'a'), { recursive: true })
  fs.writeFileSync(path.join(root, 'a'), 'not a folder\n')
  const found = await scanFolders(await scanWorkspace([{ name: 'r', path: root }]), new Map([[path.join(root, 'a'), new Set(['x.ts'])]]), new Set(first.folders), { filesUnder: filesUnder(held), bytes: first.bytes })
  t.same([found.changed, found.gone.sort(), found.folders, found.bytes], [[], [path.join(root, 'a/b/y.ts'), path.join(root, 'a/x.ts')], [root], 0])
})

t.test('the thread\'s memory for rescans: changes gathered until taken, the walked folders once a scan finished, none after a failed watch', async (t) => {
  const told: string[] = []
  const memory = createRescanMemory({ onChange: () => told.push('changed'), onFail: (why) => told.push(`failed: ${why}`) })
  t.same(memory.take(), { changes: new Map(), walked: undefined }, 'nothing walked yet: the first scan walks the whole tree')
  memory.scanned(['/r', '/r/a'])
  memory.watch.onChange(new Map([['/r/a', new Set(['x.ts'])]]))
  memory.watch.onChange(new Map([['/r/a', new Set(['y.ts'])], ['/r', new Set([''])]]))
  t.same(memory.take(), { changes: new Map([['/r/a', new Set(['x.ts', 'y.ts'])], ['/r', new Set([''])]]), walked: new Set(['/r', '/r/a']) })
  t.same(memory.take(), { changes: new Map(), walked: undefined }, 'taken once: a scan that fails leaves the next one to walk the whole tree')
  memory.scanned(['/r'])
  memory.forget()
  t.same(memory.take().walked, undefined, 'another file in the index\'s place: forgotten')
  memory.watch.onFail('ENOSPC')
  memory.scanned(['/r'])
  t.same(memory.take().walked, undefined, 'a watch given up sees no more changes: every scan walks the whole tree')
  t.same(told, ['changed', 'changed', 'failed: ENOSPC'], 'the notices are passed on')
  const unwatched = createRescanMemory({ onChange: () => {}, onFail: () => {} }, false)
  unwatched.scanned(['/r'])
  t.same(unwatched.take().walked, undefined, 'no watch: nothing seen, every scan walks the whole tree')
})

t.test('a name that is not UTF-8 stays out of a rescan as it stays out of a whole walk', async (t) => {
  const root = fs.realpathSync(t.testdir({ a: { 'x.ts': 'let x\n' } }))
  const first = await scanTree(await scanWorkspace([{ name: 'r', path: root }]), { size: 0, files: () => [] })
  fs.writeFileSync(Buffer.concat([Buffer.from(`${root}/a/bad-`), Buffer.from([0xff]), Buffer.from('.ts')]), 'let y\n')
  fs.mkdirSync(Buffer.concat([Buffer.from(`${root}/a/dir-`), Buffer.from([0xfe])]))
  const found = await scanFolders(await scanWorkspace([{ name: 'r', path: root }]), new Map([[path.join(root, 'a'), new Set(['x.ts'])]]), new Set(first.folders), { filesUnder: filesUnder(indexAfter([], first)), bytes: first.bytes }, new AbortController().signal)
  t.same([found.changed, found.gone, found.folders.sort()], [[], [], [root, path.join(root, 'a')]])
})
