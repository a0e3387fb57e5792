import t, { type Test } from 'tap'
import fc from 'fast-check'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import net from 'node:net'
import pino from 'pino'
import { runs } from '../../helpers/property.js'
import { syncFs } from '../../../src/services/workspace/fs-ops.js'
import { walkTree } from '../../../src/services/workspace/walk.js'
import { walkHandler } from '../../../src/services/workspace/walk-worker.js'
import { createWalkThreads, WalkThreadError } from '../../../src/services/workspace/walk-thread.js'
import { createWorkspace, type WorkspaceService } from '../../../src/services/workspace/workspace.js'
import { emitFrames } from '../../../src/services/workspace/walk-frames.js'
import type { FolderFrame, WalkOptions, WalkResult, WalkThreads, WalkUnit } from '../../../src/services/workspace/walk-types.js'

// The descriptor-relative walk (folder-walk.ts, as a walk thread runs it) gives what the promise walk (walk.ts)
// gives, for every option, over a tree with every kind of entry; its threads and their failures.

const log = pino({ level: 'silent' })
const linux = process.platform === 'linux' ? false : 'descriptor-relative walks need /proc'

/** A tree with hidden, ignored and re-included entries, rule files of every shape, links of every kind, odd names. */
function makeTree (t: Test): { root: string, outside: string } {
  const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'wmcp-folder-walk-')))
  t.teardown(() => fs.rmSync(base, { recursive: true, force: true }))
  const root = path.join(base, 'root')
  const outside = path.join(base, 'outside')
  const write = (rel: string, text = 'x\n'): void => {
    fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true })
    fs.writeFileSync(path.join(root, rel), text)
  }
  write('.gitignore', '*.log\nbuild/\n!keep.log\n')
  write('src/a.ts')
  write('src/b.test.ts')
  write('src/debug.log')
  write('src/keep.log')
  write('src/.hidden.ts')
  write('src/deep/er/est/leaf.ts')
  write('src/deep/.ignore', '*.tmp\n')
  write('src/deep/x.tmp')
  write('src/deep/new\nline.ts')
  // Rules of a folder one level down that decide entries two and three levels down (a split walk reads those apart).
  write('src/.gitignore', '*.gen.ts\n')
  write('src/deep/x.gen.ts')
  write('src/deep/er/y.gen.ts')
  write('build/out.js')
  write('docs/.gitignore', '!*.log\n')
  write('docs/readme.md')
  write('docs/notes.log')
  write('linked-rules/a.md')
  write('rules-target.txt', '*.md\n')
  fs.symlinkSync('../rules-target.txt', path.join(root, 'linked-rules/.gitignore'))
  fs.mkdirSync(path.join(root, 'dir-rules/.gitignore'), { recursive: true })
  write('dir-rules/kept.log.txt')
  fs.mkdirSync(path.join(root, '.git/objects'), { recursive: true })
  fs.mkdirSync(path.join(root, 'empty'))
  fs.mkdirSync(outside)
  fs.writeFileSync(path.join(outside, 'secret.txt'), 'secret\n')
  fs.symlinkSync('src', path.join(root, 'link-in'))
  fs.symlinkSync(outside, path.join(root, 'link-out'))
  fs.symlinkSync('missing', path.join(root, 'link-broken'))
  fs.symlinkSync('loop', path.join(root, 'loop'))
  fs.writeFileSync(Buffer.concat([Buffer.from(path.join(root, 'src/')), Buffer.from([0x62, 0xe9, 0xff])]), 'odd\n')
  fs.mkdirSync(Buffer.concat([Buffer.from(path.join(root, 'odd-')), Buffer.from([0xfe])]))
  fs.writeFileSync(Buffer.concat([Buffer.from(path.join(root, 'odd-')), Buffer.from([0xfe]), Buffer.from('/inner.txt')]), 'in\n')
  return { root, outside }
}

/** What a walk answered, without what legitimately differs (mtimes of folders read a moment apart are equal anyway). */
const shape = (r: WalkResult): unknown => ({ ...r, entries: r.entries.map(e => ({ ...e, fsPath: Buffer.from(e.fsPath).toString('hex') })) })

async function both (root: string): Promise<{ here: WorkspaceService, promise: WorkspaceService }> {
  return {
    here: await createWorkspace({ root, log, listing: syncFs, walkHere: true }),
    // Walks of this one run in this thread, by the promise walk: a walk-threads stand-in that always fails hands them back.
    promise: await createWorkspace({ root, log, walks: { run: async () => { throw new WalkThreadError('not here') }, close: async () => {} } })
  }
}

t.test('every option combination: the descriptor-relative walk, whole or split over two threads, answers exactly what the promise walk answers', { skip: linux }, async (t) => {
  const { root } = makeTree(t)
  const { here, promise } = await both(root)
  const threads = createWalkThreads(2)
  t.teardown(() => threads.close())
  const split = await createWorkspace({ root, log, walks: threads })
  const start = await here.resolve('.')
  const sub = await here.resolve('src')
  await fc.assert(fc.asyncProperty(
    fc.record({
      atSrc: fc.boolean(),
      maxDepth: fc.constantFrom(1, 2, 3, 10),
      includeHidden: fc.boolean(),
      respectGitignore: fc.boolean(),
      showIgnoredDirs: fc.boolean(),
      countAtLimit: fc.boolean(),
      resolveLinks: fc.boolean(),
      statDirs: fc.boolean(),
      showDirs: fc.boolean(),
      maxEntries: fc.constantFrom(3, 7, 12, 1000),
      sort: fc.constantFrom(undefined, 'name', 'mtime', 'size'),
      match: fc.constantFrom(undefined, { patterns: ['*.ts'], exclude: [] }, { patterns: ['**/*'], exclude: ['**/deep/**'] }, { patterns: ['*.log', 'src/**'], exclude: ['er'] })
    }),
    async ({ atSrc, match, sort, ...rest }) => {
      const dir = atSrc ? sub : start
      const options: WalkOptions = {
        ...rest,
        start: dir,
        ...(sort === undefined ? {} : { sort: sort as 'name' }),
        ...(match === undefined ? {} : { match: { patterns: [...match.patterns], exclude: [...match.exclude], base: dir.base, overRoots: false } })
      }
      const a = await here.walk(options)
      const b = await walkTree(promise, options)
      const c = await split.walk(options)
      t.strictSame(shape(a), shape(b), JSON.stringify(options))
      t.strictSame(shape(c), shape(b), `split: ${JSON.stringify(options)}`)
    }), runs(60))
})

t.test('the start folder: a failure is its fs code, raw here and the tool error through a workspace', { skip: linux }, async (t) => {
  const { root } = makeTree(t)
  const { here } = await both(root)
  const options = { maxDepth: 3, includeHidden: false, respectGitignore: true, maxEntries: 100 }
  const code = async (fsPath: string): Promise<unknown> => await here.walk({ ...options, start: { relative: 'x', fsPath } }).catch((e: { code?: string }) => e.code)
  t.equal(await code(path.join(root, 'rules-target.txt')), 'ENOTDIR', 'a file')
  t.equal(await code(path.join(root, 'missing')), 'ENOENT', 'gone')
  t.equal(await code(path.join(root, 'link-in')), 'ESCAPED', 'a link, never followed')
  t.equal(await code(path.join(root, '..', 'outside')), 'ESCAPED', 'a folder outside, found by its descriptor')

  const threaded = await createWorkspace({ root, log })
  const gone = await threaded.resolve('src')
  fs.rmSync(path.join(root, 'src'), { recursive: true })
  t.match(await threaded.walk({ ...options, start: gone }).catch((e: unknown) => e), { toolCode: 'PATH_NOT_FOUND' }, 'a walk thread\'s failure is the caller\'s tool error')
})

t.test('a stop: an aborted signal or the stop a walk thread reads, noted with its reason, what was walked kept', { skip: linux }, async (t) => {
  const { root } = makeTree(t)
  const { here } = await both(root)
  const start = await here.resolve('.')
  const options = { start, maxDepth: 10, includeHidden: true, respectGitignore: false, maxEntries: 1000 }
  const aborted = new AbortController()
  aborted.abort(new DOMException('late', 'TimeoutError'))
  t.match(await here.walk({ ...options, signal: aborted.signal }), { entries: [], truncated: true, notes: ['stopped early (TimeoutError); results are partial'] })
  const plain = new AbortController()
  plain.abort('no name')
  t.match((await here.walk({ ...options, signal: plain.signal })).notes, ['stopped early (aborted); results are partial'])
  const threads = createWalkThreads(1)
  t.teardown(() => threads.close())
  const threaded = await createWorkspace({ root, log, walks: threads })
  t.match((await threaded.walk({ ...options, start: await threaded.resolve('.'), signal: plain.signal })).notes, ['stopped early (aborted); results are partial'], 'through a thread too')
  let folders = 0
  const stopped = await here.walk({ ...options, stopped: () => ++folders > 2 ? 'AbortError' : undefined })
  t.match(stopped, { truncated: true, notes: ['stopped early (AbortError); results are partial'] })
  t.ok(stopped.entries.length > 0, 'what was walked before the stop is answered')
})

t.test('the walk thread handler: walks a root it makes once, answers a start folder\'s failure by its code', { skip: linux }, async (t) => {
  const { root } = makeTree(t)
  const handle = walkHandler()
  const stop = new SharedArrayBuffer(64)
  const spec = { maxDepth: 3, includeHidden: false, respectGitignore: true, maxEntries: 100 }
  const walked = await handle({ root: { path: root, name: 'root', prefixed: false }, options: { ...spec, start: { relative: '.', fsPath: root } }, stop })
  t.ok('result' in walked && walked.result.entries.some(e => e.relative === 'src/a.ts'))
  const odd = Buffer.concat([Buffer.from(path.join(root, 'odd-')), Buffer.from([0xfe])])
  const bytes = await handle({ root: { path: root, name: 'root', prefixed: false }, options: { ...spec, start: { relative: 'odd-\\xfe', fsPath: new Uint8Array(odd) as Buffer } }, stop })
  t.match(bytes, { result: { entries: [{ relative: 'odd-\\xfe/inner.txt' }] } }, 'a start path of bytes comes as a Uint8Array and is used as one')
  t.strictSame(await handle({ root: { path: root, name: 'root', prefixed: false }, options: { ...spec, start: { relative: 'gone', fsPath: path.join(root, 'gone') } }, stop }), { failed: 'ENOENT' })
  // The caller's side writes the reason's length, then its name (walk-thread.ts): the walk stops at once.
  const stopped = new SharedArrayBuffer(64)
  new Uint8Array(stopped, 4).set(Buffer.from('TimeoutError'))
  Atomics.store(new Int32Array(stopped, 0, 1), 0, 'TimeoutError'.length)
  t.match(await handle({ root: { path: root, name: 'root', prefixed: false }, options: { ...spec, start: { relative: '.', fsPath: root } }, stop: stopped }), { result: { entries: [], notes: ['stopped early (TimeoutError); results are partial'] } })
  await t.rejects(handle({ root: { path: path.join(root, 'no-such-root'), name: 'x', prefixed: false }, options: { ...spec, start: { relative: '.', fsPath: root } }, stop }), /ENOENT/, 'a root that cannot be made fails the request')
  await t.rejects(handle({ root: { path: root, name: 'root', prefixed: false }, options: { ...spec, start: { relative: '.', fsPath: root }, match: { patterns: ['['], exclude: [], base: '', overRoots: false } }, stop }), /INVALID_GLOB/, 'an error without an fs code is the request\'s')
})

t.test('walk threads: walks go to the least busy, an abort stops a walk at its next folder, a failed thread hands the walk back', { skip: linux }, async (t) => {
  const { root } = makeTree(t)
  const threads = createWalkThreads(2)
  t.teardown(() => threads.close())
  const workspace = await createWorkspace({ root, log, walks: threads })
  const start = await workspace.resolve('.')
  const options = { start, maxDepth: 10, includeHidden: true, respectGitignore: true, maxEntries: 1000 }
  const [one, two] = await Promise.all([workspace.walk(options), workspace.walk({ ...options, sort: 'name' })])
  t.equal(one.entries.length, two.entries.length, 'two walks at once, each answered')
  t.ok(one.entries.some(e => typeof e.fsPath !== 'string' && Buffer.isBuffer(e.fsPath)), 'a path of bytes comes back a Buffer')

  const aborted = new AbortController()
  aborted.abort(new DOMException('late', 'TimeoutError'))
  t.match(await workspace.walk({ ...options, signal: aborted.signal }), { truncated: true, notes: ['stopped early (TimeoutError); results are partial'] }, 'an abort before the walk')
  const later = new AbortController()
  const walking = workspace.walk({ ...options, signal: later.signal })
  later.abort(new DOMException('cancelled', 'AbortError'))
  const cut = await walking
  t.ok(cut.notes.length === 0 || cut.notes[0] === 'stopped early (AbortError); results are partial', 'an abort during the walk stops it, or it had finished')

  const inFlight = workspace.walk(options)
  await threads.close()
  t.ok((await inFlight).entries.length > 0, 'a walk whose thread is closed under it is walked here instead')
  t.ok((await workspace.walk(options)).entries.length > 0, 'closed threads start again for the next walk')
  t.match(await workspace.walk({ ...options, match: { patterns: ['['], exclude: [], base: '', overRoots: false } }).catch((e: unknown) => e), { toolCode: 'INVALID_GLOB' }, 'a walk the thread refuses is refused here too')

  const failing: WalkThreads = { run: async () => { throw new WalkThreadError('crashed') }, close: async () => {} }
  const fallback = await createWorkspace({ root, log, walks: failing })
  t.strictSame(shape(await fallback.walk({ ...options, start: await fallback.resolve('.') })), shape(await workspace.walk(options)), 'a failed thread: the walk runs in the serving thread')
  const broken: WalkThreads = { run: async () => { throw new Error('not a thread failure') }, close: async () => {} }
  const rethrows = await createWorkspace({ root, log, walks: broken })
  await t.rejects(rethrows.walk({ ...options, start: await rethrows.resolve('.') }), /not a thread failure/)
  const oneLevel = await rethrows.walk({ ...options, start: await rethrows.resolve('.'), maxDepth: 1 })
  t.ok(oneLevel.entries.length > 0, 'a one-level walk never goes to a thread')
})

t.test('a folder whose listing fails below the start is noted and the walk goes on; at the start it is the caller\'s error', { skip: linux }, async (t) => {
  const { root } = makeTree(t)
  const { here } = await both(root)
  const start = await here.resolve('.')
  const options = { start, maxDepth: 10, includeHidden: false, respectGitignore: false, maxEntries: 1000 }
  const failing = (parent: string) => (entry: { relative: string }): boolean => {
    if (entry.relative.startsWith(parent)) throw new Error('cannot tell')
    return true
  }
  const walked = await here.walk({ ...options, keepEntry: failing('src/deep/') })
  t.match(walked.notes, ['src/deep/: not readable (error); its entries are not listed'])
  t.match(walked.entries.find(e => e.relative === 'src/deep'), { unreadable: 'not readable (error)' })
  t.ok(walked.entries.some(e => e.relative === 'src/a.ts'), 'the rest is walked')
  await t.rejects(here.walk({ ...options, keepEntry: failing('') }), /cannot tell/)
})

t.test('a folder at the depth limit removed before it is counted has no count, and says why', { skip: linux }, async (t) => {
  const { root } = makeTree(t)
  const { here } = await both(root)
  const walked = await here.walk({
    start: await here.resolve('.'),
    maxDepth: 1,
    countAtLimit: true,
    includeHidden: false,
    respectGitignore: false,
    maxEntries: 1000,
    keepDir: (relative) => {
      if (relative === 'empty') fs.rmdirSync(path.join(root, 'empty'))
      return true
    }
  })
  t.match(walked.entries.find(e => e.relative === 'empty'), { childCount: undefined, unreadable: 'removed while listing' })
  t.match(walked.entries.find(e => e.relative === 'docs'), { childCount: 3 })
})

t.test('a rule file that cannot be opened (a socket) is no rules, as git treats an unreadable one', { skip: linux }, async (t) => {
  const { root } = makeTree(t)
  const server = net.createServer()
  await new Promise<void>(resolve => server.listen(path.join(root, 'docs', '.ignore'), resolve))
  t.teardown(() => server.close())
  const { here, promise } = await both(root)
  const options = { start: await here.resolve('.'), maxDepth: 10, includeHidden: true, respectGitignore: true, maxEntries: 1000 }
  const walked = await here.walk(options)
  t.ok(walked.entries.some(e => e.relative === 'docs/.ignore' && e.kind === 'socket'), 'listed, never read')
  t.strictSame(shape(walked), shape(await walkTree(promise, options)))
})

t.test('a root shown with its name: the name screen never hides a top-level file a glob matches by its shown path', { skip: linux }, async (t) => {
  const { root } = makeTree(t)
  const named = { root, log, name: 'rt', prefixed: true }
  const here = await createWorkspace({ ...named, listing: syncFs, walkHere: true })
  const promise = await createWorkspace({ ...named, walks: { run: async () => { throw new WalkThreadError('not here') }, close: async () => {} } })
  const start = await here.resolve('rt:')
  // A top-level file is shown as `rt:name`, one segment: `**/rt:*` matches it, though no glob of it matches its name alone.
  for (const patterns of [['**/rt:*'], ['**/rt*.txt'], ['**/src/*.ts']]) {
    const options = { start, maxDepth: 3, includeHidden: false, respectGitignore: true, maxEntries: 1000, statDirs: false, match: { patterns, exclude: [], base: start.base, overRoots: false } }
    const walked = await here.walk(options)
    t.strictSame(shape(walked), shape(await walkTree(promise, options)), JSON.stringify(patterns))
  }
  t.ok((await here.walk({ start, maxDepth: 1, includeHidden: false, respectGitignore: true, maxEntries: 1000, match: { patterns: ['**/rt:*'], exclude: [], base: start.base, overRoots: false } })).entries.some(e => e.relative === 'rt:rules-target.txt'), 'found by its shown path')
})

/** A walk split in parts the way walk threads split it, each part read here in turn: the top, then `readers` claiming units. */
async function inParts (here: WorkspaceService, options: WalkOptions, readers = 2, between?: () => void): Promise<WalkResult> {
  const top = await here.walk({ ...options, part: { top: true } })
  const { frame, units } = top.pieces as { frame: FolderFrame, units: WalkUnit[] }
  between?.()
  const part = { units, claim: new SharedArrayBuffer(4) }
  const frames: Record<number, FolderFrame> = {}
  for (let i = 0; i < readers; i++) Object.assign(frames, (await here.walk({ ...options, part })).pieces?.frames)
  const result: WalkResult = { entries: [], notes: [], truncated: false, skippedHidden: 0, skippedIgnored: 0, skippedIgnoredDirs: 0 }
  emitFrames(frame, frames, options, result)
  return result
}

t.test('a walk read in parts (the top, then units claimed one at a time) and put together answers what one walk answers', { skip: linux }, async (t) => {
  const { root } = makeTree(t)
  const { here } = await both(root)
  const start = await here.resolve('.')
  for (const respectGitignore of [true, false]) {
    for (const maxEntries of [3, 9, 1000]) {
      for (const readers of [1, 2]) {
        const options = { start, maxDepth: 10, includeHidden: true, respectGitignore, maxEntries, showIgnoredDirs: true, countAtLimit: true }
        t.strictSame(shape(await inParts(here, options, readers)), shape(await here.walk(options)), JSON.stringify({ respectGitignore, maxEntries, readers }))
      }
    }
  }
  const top = await here.walk({ start, maxDepth: 10, includeHidden: true, respectGitignore: true, maxEntries: 1000, part: { top: true } })
  t.ok(new Set(top.pieces?.units?.map(u => u.parent.relative)).size > 1, 'units below more than one folder (each parent opened once, then closed)')
})

t.test('a folder above units removed or swapped for a link between the parts: its units are noted unreadable, nothing is followed', { skip: linux }, async (t) => {
  const { root, outside } = makeTree(t)
  const { here } = await both(root)
  const options = { start: await here.resolve('.'), maxDepth: 10, includeHidden: false, respectGitignore: true, maxEntries: 1000 }
  const moved = await inParts(here, options, 2, () => fs.renameSync(path.join(root, 'src'), path.join(root, 'src-moved')))
  t.ok(moved.notes.some(n => n.startsWith('src/deep/: ') && n.endsWith('its entries are not listed')), 'a unit below the moved folder is noted')
  t.notOk(moved.entries.some(e => e.relative.startsWith('src/deep/')), 'and not listed')
  fs.mkdirSync(path.join(outside, 'deep', 'er'), { recursive: true })
  fs.writeFileSync(path.join(outside, 'deep', 'er', 'outside.ts'), 'secret\n')
  fs.renameSync(path.join(root, 'src-moved'), path.join(root, 'src'))
  const swapped = await inParts(here, options, 2, () => {
    fs.renameSync(path.join(root, 'src'), path.join(root, 'src-moved'))
    fs.symlinkSync(outside, path.join(root, 'src'))
  })
  t.notOk(swapped.entries.some(e => e.name === 'outside.ts' || e.relative.startsWith('src/deep/')), 'nothing outside is listed')
  t.ok(swapped.notes.some(n => n.startsWith('src/deep/: ')), 'the unit below the link is noted')
})

t.test('put together: a unit no part answered is a stop; a split walk with no folder two levels down needs no units', { skip: linux }, async (t) => {
  const child = { name: 'a', relative: 'a', fsPath: '/x/a', kind: 'dir' as const, depth: 1, size: -1, mtimeMs: 0 }
  const result: WalkResult = { entries: [], notes: [], truncated: false, skippedHidden: 0, skippedIgnored: 0, skippedIgnoredDirs: 0 }
  emitFrames({ children: [child], skipped: { skippedHidden: 0, skippedIgnored: 0, skippedIgnoredDirs: 0 }, sub: { 0: { unit: 0 } } }, {}, { maxEntries: 10 }, result)
  t.match(result, { truncated: true, notes: ['stopped early (aborted); results are partial'], entries: [{ relative: 'a' }] })

  const { root } = makeTree(t)
  const { here } = await both(root)
  const threads = createWalkThreads(2)
  t.teardown(() => threads.close())
  const split = await createWorkspace({ root, log, walks: threads })
  const options = { start: await here.resolve('docs'), maxDepth: 10, includeHidden: true, respectGitignore: true, maxEntries: 1000 }
  t.strictSame(shape(await split.walk({ ...options, start: await split.resolve('docs') })), shape(await here.walk(options)))
})

t.test('a split walk whose start folder is gone when its units are read answers the start folder\'s tool error', { skip: linux }, async (t) => {
  const { root } = makeTree(t)
  const handler = walkHandler()
  // Threads that walk here with the real handler; the start folder goes once the top part is read.
  const threads = createWalkThreads(2, () => ({
    run: async (request) => {
      const answer = await handler(request)
      if (request.options.part !== undefined && 'top' in request.options.part) fs.renameSync(path.join(root, 'src'), path.join(root, 'src-gone'))
      return answer
    },
    close: async () => {}
  }))
  const workspace = await createWorkspace({ root, log, walks: threads })
  const start = await workspace.resolve('src')
  t.match(await workspace.walk({ start, maxDepth: 10, includeHidden: true, respectGitignore: true, maxEntries: 1000 }).catch((e: unknown) => e), { toolCode: 'PATH_NOT_FOUND' })
})
