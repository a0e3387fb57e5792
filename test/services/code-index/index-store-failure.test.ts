import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import pino from 'pino'
import t, { type Test } from 'tap'
import { createCodeIndex, type CodeIndex, type CodeIndexOptions } from '../../../src/services/code-index/code-index.js'
import { acquireLease } from '../../../src/services/code-index/index-lease.js'
import { loadSqlite, type Sqlite } from '../../../src/services/code-index/index-schema.js'
import { pruneStateDir } from '../../../src/services/code-index/index-file.js'
import { publishIndex, stageIndex } from '../../../src/services/code-index/index-publish.js'
import { storeProblemOf } from '../../../src/services/code-index/store-errors.js'
import { locateTreeSitter, type TreeSitterLocation } from '../../../src/services/symbols/parser.js'
import { createWorkspace } from '../../../src/services/workspace/workspace.js'
import { findSymbol } from '../../../src/tools/find-symbol.js'
import { tempDir, toolContext } from '../../helpers/workspace-fixture.js'
import { clockPasses, waitUntil } from '../../helpers/wait.js'

// A state disk that fills or fails never kills the server (issue 29): the index goes unavailable with the reason,
// the space and the flag, a later scan retries, and the tools answer a tool error the model can act on.

const log = pino({ level: 'silent' })
const sqlite = loadSqlite() as Sqlite
const where = locateTreeSitter() as TreeSitterLocation

/** A tree of `n` C files, each with a few definitions (about 1.6 KB of source each). */
function tree (t: Test, n: number): string {
  const root = tempDir(t, 'wmcp-full-root-')
  for (let i = 0; i < n; i++) {
    const body = Array.from({ length: 12 }, (_, j) => `int handler_${i}_${j}(int request, int flags) { return request + flags * ${j}; }`).join('\n')
    fs.writeFileSync(path.join(root, `unit${i}.c`), `${body}\n`)
  }
  return root
}

async function indexOf (t: Test, root: string, stateDir: string, options: Partial<CodeIndexOptions> = {}): Promise<CodeIndex> {
  const workspace = await createWorkspace({ root, log })
  const index = createCodeIndex({ workspace, treeSitter: where, sqlite, file: path.join(stateDir, 'index-0123456789abcdef.sqlite'), log, ...options })
  t.teardown(() => index.close())
  return index
}

t.test('errors a store can fail with, by SQLite result code or errno', async (t) => {
  t.equal(storeProblemOf({ code: 'ERR_SQLITE_ERROR', errcode: 13 }), 'disk-full')
  t.equal(storeProblemOf({ sqliteCode: 13 | (1 << 8) }), 'disk-full', 'an extended code counts by its primary one')
  t.equal(storeProblemOf({ errcode: 8 }), 'read-only')
  t.equal(storeProblemOf({ errcode: 10 | (4 << 8) }), 'io-error')
  t.equal(storeProblemOf({ errcode: 14 }), 'cannot-open')
  t.equal(storeProblemOf({ errcode: 1 }), undefined, 'a plain SQL error is a bug, not the disk')
  t.equal(storeProblemOf(Object.assign(new Error('x'), { code: 'ENOSPC' })), 'disk-full')
  t.equal(storeProblemOf(Object.assign(new Error('x'), { code: 'EROFS' })), 'read-only')
  t.equal(storeProblemOf(Object.assign(new Error('x'), { code: 'EIO' })), 'io-error')
  t.equal(storeProblemOf(new Error('x')), undefined)
  t.equal(storeProblemOf('text'), undefined)
  t.equal(storeProblemOf(null), undefined)
})

t.test('past its size limit the index is unavailable, not dead: the reason, the space, a retry; the tools say what to do', async (t) => {
  const root = tree(t, 150)
  const stateDir = tempDir(t, 'wmcp-full-state-')
  const index = await indexOf(t, root, stateDir, { maxBytes: 256 * 1024, retryMs: 150 })

  const ready = await index.ready(60_000, new AbortController().signal)
  await waitUntil(() => index.status().failures >= 2, 'two failed writes')
  const status = index.status()
  const call = Promise.resolve(findSymbol.run({ name: 'handler_1_1', workspace: await createWorkspace({ root, log }), codeIndex: index } as never, toolContext()))

  t.equal(ready, false)
  t.match(status, { state: 'unavailable', problem: { kind: 'size-limit', stateDir, detail: /full/, neededBytes: Number, freeBytes: Number, retryAt: Number } })
  t.ok(status.failures >= 2, `a later scan tried again (${status.failures} failures)`)
  t.ok((status.problem?.neededBytes ?? 0) > 0, 'the space it needs, from the source the scan found')
  await t.rejects(call, { toolCode: 'INDEX_UNAVAILABLE', message: /^ERROR INDEX_UNAVAILABLE: the code index reached its size limit, --index-max-mb \(.* free; the index needs about .*\)\. Hint: search_regex searches the files themselves; the operator can raise --index-max-mb/ })
})

/** A 1 MB tmpfs mounted on a new folder, or why there is none (the test then says so and skips). */
function smallTmpfs (): { dir: string } | { skip: string } {
  if (process.getuid?.() !== 0) return { skip: 'mounting a tmpfs needs root (CI runs as root)' }
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'wmcp-tmpfs-')))
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', dir], { stdio: 'ignore' })
    return { dir }
  } catch {
    fs.rmSync(dir, { recursive: true, force: true })
    return { skip: 'this machine does not let a test mount a tmpfs' }
  }
}
const tmpfs = smallTmpfs()

t.test('a real full file system: unavailable while full, complete once space is freed and the retry runs', { skip: 'skip' in tmpfs ? tmpfs.skip : false }, async (t) => {
  const stateDir = (tmpfs as { dir: string }).dir
  t.teardown(() => {
    execFileSync('umount', ['-l', stateDir])
    fs.rmSync(stateDir, { recursive: true, force: true })
  })
  // Fill it, leaving about 100 KB: the index of this tree needs several times that.
  const filler = path.join(stateDir, 'filler')
  fs.writeFileSync(filler, Buffer.alloc(1024 * 1024 - 100 * 1024))
  const index = await indexOf(t, tree(t, 150), stateDir, { retryMs: 200 })

  t.equal(await index.ready(60_000, new AbortController().signal), false)
  await waitUntil(() => index.status().state === 'unavailable', 'the index to say unavailable')
  t.match(index.status().problem, { kind: 'disk-full', stateDir })
  t.ok((index.status().problem?.freeBytes ?? Infinity) < 200 * 1024, 'the free space it saw')

  fs.rmSync(filler)
  await waitUntil(() => index.status().state === 'ready', 'the index to say ready')
  t.match(index.status(), { state: 'ready', files: 150 }, 'the retry completed the index once there was room')
  t.equal(index.status().problem, undefined)
  t.equal(index.findSymbols('handler_149_11', 'exact', undefined, undefined, 1).length, 1)
})

t.test('one writer at a time: a second index of the same file reads what the first writes; a dead holder is taken over', async (t) => {
  const root = tree(t, 20)
  const stateDir = tempDir(t, 'wmcp-lease-')
  const file = path.join(stateDir, 'index-0123456789abcdef.sqlite')
  const first = await indexOf(t, root, stateDir)
  const held = acquireLease(file)
  const second = await indexOf(t, root, stateDir, { staleMs: 100 })

  second.start()
  await waitUntil(() => second.status().writer !== undefined, 'the second index to name the writer')
  t.match(second.status(), { writer: new RegExp(`^process ${process.pid} on `) }, 'it says who writes the index')
  t.equal(await second.ready(300, new AbortController().signal), false, 'a holder that writes nothing: the wait ends at its limit')
  t.ok('release' in held)
  if ('release' in held) held.release()
  // Whichever takes the lease first writes; the other reads what it wrote, and a call on it waits for that.
  const waited = second.ready(60_000, new AbortController().signal)
  first.start()
  t.equal(await waited, true, 'a call waits for the index whoever writes it')
  await waitUntil(() => first.status().files === 20 && second.status().files === 20, 'both indexes to hold 20 files')
  for (const index of [first, second]) t.equal(index.findSymbols('handler_3_3', 'exact', undefined, undefined, 1).length, 1, 'both answer from the one index')

  // A lock left by a process that is gone does not hold anyone off.
  fs.writeFileSync(`${file}.lock`, JSON.stringify({ pid: 2 ** 22 + 12345, host: os.hostname(), since: 0 }))
  const taken = acquireLease(file)
  t.ok('release' in taken, 'the dead holder\'s lease is taken over')
  if ('release' in taken) taken.release()
  t.notOk(fs.existsSync(`${file}.lock`), 'released: the lock is gone')
})

t.test('the state folder keeps what is used: old and over-limit indexes of other roots go, never the current one or one in use', async (t) => {
  const dir = tempDir(t, 'wmcp-prune-')
  const day = 86_400_000
  const now = Date.now()
  const make = (name: string, bytes: number, ageDays: number, extra: string[] = []): string => {
    const file = path.join(dir, name)
    for (const suffix of ['', ...extra]) {
      fs.writeFileSync(`${file}${suffix}`, Buffer.alloc(suffix === '' ? bytes : 10))
      fs.utimesSync(`${file}${suffix}`, new Date(now - ageDays * day), new Date(now - ageDays * day))
    }
    return file
  }
  const current = make('index-0000000000000001.sqlite', 1000, 90)
  const old = make('index-0000000000000002.sqlite', 1000, 40, ['-wal', '-shm'])
  const inUse = make('index-0000000000000003.sqlite', 1000, 40, ['.lock'])
  const big = make('index-0000000000000004.sqlite', 5000, 2)
  const recent = make('index-0000000000000005.sqlite', 1000, 1)
  const other = make('notes.txt', 100, 400)
  const lines: Array<Record<string, unknown>> = []
  const spy = pino({ level: 'info' }, { write: (line: string) => { lines.push(JSON.parse(line)) } })

  const removed = pruneStateDir(dir, current, { maxAgeMs: 30 * day, maxBytes: 8000 }, spy, now)

  t.same(removed.sort(), [old, big].sort(), 'the unused one, then the least recently used while over the limit')
  for (const file of [current, inUse, recent, other]) t.ok(fs.existsSync(file), path.basename(file))
  t.notOk(fs.existsSync(`${old}-wal`), 'with its companions')
  t.match(lines, [{ file: old, reason: 'unused', unusedDays: 40 }, { file: big, reason: 'over the size limit' }])
  t.same(pruneStateDir(path.join(dir, 'missing'), current, { maxAgeMs: day, maxBytes: 0 }, spy), [], 'a folder that is not there holds nothing to remove')
})

t.test('a shared index: unavailable until one is published, then read without writing, each new one followed', async (t) => {
  const root = tree(t, 5)
  const stateDir = tempDir(t, 'wmcp-shared-')
  const published = path.join(stateDir, 'index-0123456789abcdef.sqlite')
  const replica = await indexOf(t, root, stateDir, { mode: 'shared' })
  const buildDir = tempDir(t, 'wmcp-build-')
  const builder = await indexOf(t, root, buildDir, { staleMs: 0 })
  /** Publishes what the builder holds now, as the `index` command does: a whole copy, sealed, renamed into place. */
  const publish = (): void => {
    const staging = stageIndex(sqlite, path.join(buildDir, 'index-0123456789abcdef.sqlite'))
    fs.renameSync(staging, path.join(stateDir, 'copy.sqlite'))
    publishIndex(path.join(stateDir, 'copy.sqlite'), published)
  }

  t.equal(await replica.ready(1000, new AbortController().signal), false)
  t.match(replica.status(), { state: 'unavailable', problem: { kind: 'missing', stateDir } })
  t.equal(await builder.ready(60_000, new AbortController().signal), true)
  publish()
  t.equal(await replica.ready(1000, new AbortController().signal), true, 'published: ready at once, no scan')
  t.match(replica.status(), { state: 'ready', files: 5, built: Number, scanning: false })
  t.equal(replica.findSymbols('handler_4_0', 'exact', undefined, undefined, 1).length, 1)
  t.same(fs.readdirSync(stateDir), ['index-0123456789abcdef.sqlite'], 'the replica wrote nothing beside it (no log, no lock)')

  fs.writeFileSync(path.join(root, 'later.c'), 'int added_later(void) { return 1; }\n')
  // staleMs 0: the next ready() rescans once the clock has moved past the last scan (the check is >, to the ms).
  await clockPasses(builder.status().lastScan as number)
  t.equal(await builder.ready(60_000, new AbortController().signal), true)
  await waitUntil(() => builder.findSymbols('added_later', 'exact', undefined, undefined, 1).length === 1, 'the builder to index the new file')
  publish()
  await waitUntil(() => replica.findSymbols('added_later', 'exact', undefined, undefined, 1).length === 1, 'the replica to follow the published index')
  t.equal(replica.findSymbols('added_later', 'exact', undefined, undefined, 1).length, 1, 'the next published index is followed')
  t.equal(replica.status().files, 6)
})
