import fc from 'fast-check'
import '../../helpers/property.js'
import fs from 'node:fs'
import path from 'node:path'
import pino from 'pino'
import t from 'tap'
import { laneThread, LANES_FROM, scanTree, type IndexedSet, scanWorkspace, walkSources, type LaneWalker, type SourceEntry } from '../../../src/services/code-index/index-scan.js'
import type { IndexedFile } from '../../../src/services/code-index/index-schema.js'
import { syncFs } from '../../../src/services/workspace/fs-ops.js'
import { MAX_SOURCE_BYTES } from '../../../src/services/symbols/languages.js'
import { createWorkspace, type WorkspaceService } from '../../../src/services/workspace/workspace.js'
import type { WalkResult } from '../../../src/services/workspace/walk-types.js'

// The index thread's scan: its own jail over the served roots, listing with the synchronous calls. What it
// sees must be exactly what the tools' walk sees; what it reports is what changed against the index.

const log = pino({ level: 'silent' })

/** An index holding `files`, as scanTree reads it. */
const held = (files: IndexedFile[]): IndexedSet => ({ size: files.length, files: () => files })

const indexedFrom = (root: string, names: string[]): Array<{ path: string, size: number, mtimeMs: number }> =>
  names.map(name => {
    const file = path.join(root, name)
    const stats = fs.statSync(file)
    return { path: file, size: stats.size, mtimeMs: stats.mtimeMs }
  })

t.test('a scan lists source files the rules let through, then reports only what changed or went', async (t) => {
  const root = fs.realpathSync(t.testdir({
    '.gitignore': 'build/\n*.gen.ts\n',
    src: { 'a.ts': 'export const a = 1\n', 'b.py': 'def b(): pass\n', 'c.gen.ts': 'x\n', 'README.md': '# no\n', '.hidden.ts': 'x\n' },
    build: { 'out.ts': 'x\n' },
    'big.c': 'int x;\n'.padEnd(MAX_SOURCE_BYTES + 1, ' ')
  }))
  // A name that is not UTF-8 has no stable text key: it stays out.
  fs.writeFileSync(Buffer.concat([Buffer.from(`${root}/src/bad-`), Buffer.from([0xff]), Buffer.from('.ts')]), 'x\n')
  const workspace = await scanWorkspace([{ name: 'r', path: root }])

  const first = await scanTree(workspace, held([]))
  t.same(first.changed.map(c => c.relative).sort(), ['src/a.ts', 'src/b.py'], 'ignored, hidden, other languages and oversized files are left out')
  t.same(first.changed.find(c => c.relative === 'src/a.ts')?.fsPath, path.join(root, 'src/a.ts'))
  t.same(first.gone, [])

  const indexed = indexedFrom(root, ['src/a.ts', 'src/b.py'])
  const unchanged = await scanTree(workspace, held(indexed))
  t.same([unchanged.changed, unchanged.gone], [[], []], 'an unchanged tree: nothing to do')
  t.same(unchanged.folders.sort(), [root, path.join(root, 'src')], 'the folders walked: not the ignored one, not hidden ones')

  fs.appendFileSync(path.join(root, 'src/a.ts'), 'export const b = 2\n')
  fs.rmSync(path.join(root, 'src/b.py'))
  fs.appendFileSync(path.join(root, '.gitignore'), 'src/\n')
  const later = await scanWorkspace([{ name: 'r', path: root }])
  const after = await scanTree(later, held(indexed))
  t.same([after.changed, after.gone], [[], [path.join(root, 'src/a.ts'), path.join(root, 'src/b.py')]], 'removed, and now ignored, files are gone')
})

t.test('several roots: each file by its root\'s name; a signal that fires stops the scan before it compares', async (t) => {
  const a = fs.realpathSync(t.testdir({ one: { 'x.go': 'package x\n' }, two: { 'y.rs': 'fn y() {}\n' } }))
  const workspace = await scanWorkspace([{ name: 'one', path: path.join(a, 'one') }, { name: 'two', path: path.join(a, 'two') }])

  const found = await scanTree(workspace, held([]))
  t.same(found.changed.map(c => c.relative), ['one:x.go', 'two:y.rs'])

  const stop = new AbortController()
  stop.abort()
  await t.rejects(scanTree(workspace, held([]), undefined, stop.signal), { name: 'AbortError' })
})

/** A random tree: folders, source and other files, hidden names, rule files, links in and out of the root. */
const treeArb = fc.array(fc.record({
  dir: fc.constantFrom('', 'a', 'a/b', 'c', '.h', 'a/b/d'),
  name: fc.constantFrom('x.ts', 'y.c', 'z.md', '.hid.ts', 'build', 'gen.ts', 'link', 'out'),
  kind: fc.constantFrom('file', 'dir', 'link-in', 'link-out', 'rules')
}), { maxLength: 30 })

function makeTree (root: string, outside: string, spec: Array<{ dir: string, name: string, kind: string }>): void {
  for (const { dir, name, kind } of spec) {
    const folder = path.join(root, dir)
    fs.mkdirSync(folder, { recursive: true })
    const at = path.join(folder, name)
    if (fs.existsSync(at)) continue
    if (kind === 'file') fs.writeFileSync(at, `${name}\n`)
    else if (kind === 'dir') fs.mkdirSync(at)
    else if (kind === 'link-in') fs.symlinkSync(root, at)
    else if (kind === 'link-out') fs.symlinkSync(outside, at)
    else fs.writeFileSync(path.join(folder, name.startsWith('.') ? '.ignore' : '.gitignore'), `${name}\n!gen.ts\nbuild/\n`)
  }
}

const shape = (w: WalkResult): unknown => ({ ...w, entries: w.entries.map(e => ({ ...e, fsPath: String(e.fsPath) })) })

t.test('property: the synchronous listing walks exactly as the promise one (entries, metadata, counts, notes)', async (t) => {
  const outside = fs.realpathSync(t.testdir({ 'secret.ts': 'x\n' }))
  let run = 0
  await fc.assert(fc.asyncProperty(treeArb, fc.boolean(), fc.boolean(), async (spec, respectGitignore, includeHidden) => {
    const root = path.join(outside, `tree-${run++}`)
    fs.mkdirSync(root)
    makeTree(root, outside, spec)
    const walk = async (ws: WorkspaceService): Promise<unknown> =>
      shape(await ws.walk({ start: await ws.resolve('.'), maxDepth: 64, includeHidden, respectGitignore, showIgnoredDirs: true, resolveLinks: true, countAtLimit: true, maxEntries: 1000 }))
    const promised = await walk(await createWorkspace({ root, log }))
    const synced = await walk(await createWorkspace({ root, log, listing: syncFs }))
    t.same(synced, promised)
    return JSON.stringify(synced) === JSON.stringify(promised)
  }), { numRuns: 60 })
})

const byPath = (entries: SourceEntry[]): SourceEntry[] => [...entries].sort((a, b) => a.relative < b.relative ? -1 : 1)

t.test('property: two lanes share the tree out — disjoint, and together exactly the one walk (one root or several)', async (t) => {
  const outside = fs.realpathSync(t.testdir({}))
  let run = 0
  const deep = fc.array(fc.record({
    dir: fc.constantFrom('', 'a', 'b', 'a/x', 'a/y', 'b/z', 'a/x/q', 'c/w', 'c/w/v', 'd/u'),
    name: fc.constantFrom('f.ts', 'g.c', 'h.py', 'n.md', 'sub'),
    kind: fc.constantFrom('file', 'file', 'dir', 'rules', 'link-in')
  }), { maxLength: 40 })
  await fc.assert(fc.asyncProperty(deep, deep, fc.boolean(), async (first, second, several) => {
    const base = path.join(outside, `t-${run++}`)
    for (const name of ['one', 'two']) fs.mkdirSync(path.join(base, name), { recursive: true })
    makeTree(path.join(base, 'one'), outside, first)
    makeTree(path.join(base, 'two'), outside, second)
    const roots = several ? [{ name: 'one', path: path.join(base, 'one') }, { name: 'two', path: path.join(base, 'two') }] : [{ name: 'one', path: path.join(base, 'one') }]
    const workspace = await scanWorkspace(roots)
    const whole = await walkSources(workspace, { lane: 0, lanes: 1 })
    const lanes = await Promise.all([0, 1].map(async lane => await walkSources(workspace, { lane, lanes: 2 })))
    const seen = new Set(lanes[0].files.map(e => e.relative))
    t.notOk(lanes[1].files.some(e => seen.has(e.relative)), 'no file in both lanes')
    t.same(byPath([...lanes[0].files, ...lanes[1].files]), byPath(whole.files))
    t.same(new Set([...lanes[0].folders, ...lanes[1].folders]), new Set(whole.folders), 'every folder walked by some lane')
  }), { numRuns: 40 })
})

t.test('a big index is scanned in two lanes: the other one by the walker given, or here when it fails', async (t) => {
  const root = fs.realpathSync(t.testdir({ a: { x: { 'one.ts': '1\n' }, y: { 'two.ts': '2\n' } }, b: { z: { 'three.py': '3\n' } }, 'top.c': 'int t;\n' }))
  const workspace = await scanWorkspace([{ name: 'r', path: root }])
  // Enough indexed files (all gone now) to split the walk.
  const indexed = Array.from({ length: LANES_FROM }, (_, i) => ({ path: path.join(root, `old-${i}.ts`), size: 1, mtimeMs: 1 }))
  const single = await scanTree(workspace, held(indexed))
  const asked: number[] = []
  const walker: LaneWalker = async (lane) => { asked.push(lane.lane); return await walkSources(workspace, lane) }
  const split = await scanTree(workspace, held(indexed), walker)
  const failing = await scanTree(workspace, held(indexed), async () => { throw new Error('no thread') })

  t.same(asked, [1], 'the other walker took lane 1')
  t.same(single.changed.map(c => c.relative).sort(), ['a/x/one.ts', 'a/y/two.ts', 'b/z/three.py', 'top.c'])
  t.same(split.changed.map(c => c.relative).sort(), single.changed.map(c => c.relative).sort())
  t.same(failing.changed.map(c => c.relative).sort(), single.changed.map(c => c.relative).sort(), 'a lane that could not start is walked here')
  t.equal(split.gone.length, LANES_FROM)
  t.same(split.folders.sort(), [root, ...['a', 'a/x', 'a/y', 'b', 'b/z'].map(f => path.join(root, f))].sort(), 'each folder once, though both lanes list the top ones')
  t.same(await scanTree(workspace, held(indexed.slice(1)), walker).then(() => asked), [1], 'below LANES_FROM files, one walk')
})

t.test('a lane thread walks its share in a thread of its own; a thread that fails or refuses rejects', async (t) => {
  const root = fs.realpathSync(t.testdir({ a: { x: { 'one.ts': '1\n' }, y: { 'two.ts': '2\n' } }, b: { z: { 'three.py': '3\n' }, w: { 'four.go': 'package w\n' } } }))
  const roots = [{ name: 'r', path: root }]
  const here = await walkSources(await scanWorkspace(roots), { lane: 1, lanes: 2 })
  const threaded = await laneThread(roots)({ lane: 1, lanes: 2 })
  t.same(byPath(threaded.files), byPath(here.files))
  t.same(threaded.folders.sort(), here.folders.sort())

  const dir = fs.realpathSync(t.testdir({ 'throws.mjs': 'throw new Error("cannot start")\n', 'refuses.mjs': "import { parentPort } from 'node:worker_threads'\nparentPort.on('message', ({ id }) => parentPort.postMessage({ id, error: 'walk failed' }))\n", 'silent.mjs': '\n' }))
  await t.rejects(laneThread(roots, { url: new URL(`file://${dir}/throws.mjs`) })({ lane: 1, lanes: 2 }), /cannot start/)
  await t.rejects(laneThread(roots, { url: new URL(`file://${dir}/refuses.mjs`) })({ lane: 1, lanes: 2 }), /walk failed/)
  await t.rejects(laneThread(roots, { url: new URL(`file://${dir}/silent.mjs`) })({ lane: 1, lanes: 2 }), /lane-worker thread stopped/, 'a module that serves nothing ends, and so does the wait')
  await t.rejects(laneThread([{ name: 'r', path: path.join(root, 'gone') }])({ lane: 1, lanes: 2 }), /ENOENT|no such/)
})
