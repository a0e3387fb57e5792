import fs from 'node:fs'
import path from 'node:path'
import pino from 'pino'
import t from 'tap'
import { createActivity } from '../../../src/services/activity.js'
import { parseAndWrite } from '../../../src/services/code-index/index-build.js'
import { createIndexParser, type IndexParser } from '../../../src/services/code-index/index-parser.js'
import { freeBytes } from '../../../src/services/code-index/index-file.js'
import { acquireLease, dropLease, LEASE_STALE_MS, takeOver } from '../../../src/services/code-index/index-lease.js'
import { followIndexFile, openIndexReader } from '../../../src/services/code-index/index-reader.js'
import { isLocked } from '../../../src/services/code-index/store-errors.js'
import { loadSqlite, type FileEntry, type Sqlite } from '../../../src/services/code-index/index-schema.js'
import { openIndexWriter } from '../../../src/services/code-index/index-writer.js'
import { buildSettingsOf } from '../../../src/services/code-index/index.js'
import { readSourceText } from '../../../src/services/code-index/indexed-lines.js'
import { createSymbolParser, locateTreeSitter, type TreeSitterLocation } from '../../../src/services/symbols/parser.js'
import { symbolLanguageOf, type SymbolLanguage } from '../../../src/services/symbols/languages.js'
import { createWorkspace } from '../../../src/services/workspace/workspace.js'
import { tempDir } from '../../helpers/workspace-fixture.js'
import { waitUntil } from '../../helpers/wait.js'
import { entriesHere } from '../../helpers/index-parsers.js'

// The code index's parts below the service, each on its own: the build's batching and yielding, the lease's
// take-over, the reader's refusals, the writer's completion mark, the priority of the index's parsers.

const log = pino({ level: 'silent' })
const sqlite = loadSqlite() as Sqlite
const where = locateTreeSitter() as TreeSitterLocation

t.test('activity: calls counted in and out, a leave counted once, listeners told of each change', async (t) => {
  const activity = createActivity()
  const seen: number[] = []
  activity.onChange(() => seen.push(activity.running))

  const leave = activity.enter()
  const other = activity.enter()
  leave()
  leave()
  other()

  t.same(seen, [1, 2, 1, 0])
  t.equal(activity.running, 0)
})

t.test('the build: batches weighed by definitions, a pause before every file and write, an abort or a failed write stops it', async (t) => {
  const root = tempDir(t, 'wmcp-batches-')
  for (let i = 0; i < 6; i++) fs.writeFileSync(path.join(root, `f${i}.c`), `int f${i} (void) { return ${i}; }\n`)
  const workspace = await createWorkspace({ root, log })
  const changed = Array.from({ length: 6 }, (_, i) => ({ relative: `f${i}.c`, fsPath: path.join(root, `f${i}.c`) }))
  // 15,000 definitions (each its own node) weigh 9 MB: a batch of its own each.
  const heavy = entriesHere({ definitions: async () => ({ definitions: Array.from({ length: 15_000 }, (_, i) => ({ kind: 'function', name: `d${i}`, start: 0, nameRow: 0, end: 0, endColumn: 1, from: i, to: i + 1 })), hasErrors: false }) })
  const batches: number[] = []
  let pauses = 0

  await parseAndWrite(changed, { workspace, parsers: [heavy, heavy], write: (entries) => { batches.push(entries.length) }, pause: async () => { pauses++ } }, new AbortController().signal)

  t.equal(batches.reduce((a, b) => a + b, 0), 6, 'every file written')
  t.ok(batches.length >= 5, `a batch per heavy file or two, not one for all (${batches.join(', ')})`)
  t.ok(pauses >= 6 + batches.length, 'the build yields before each file and each write')

  const aborted = new AbortController()
  const slow = entriesHere({ definitions: async () => { aborted.abort(); return { definitions: [], hasErrors: false } } })
  await t.rejects(parseAndWrite(changed, { workspace, parsers: [slow], write: () => {} }, aborted.signal), { name: 'AbortError' }, 'an abort stops it between files')

  let writes = 0
  const failing = parseAndWrite(changed, { workspace, parsers: [heavy, heavy], write: () => { if (++writes === 2) throw new Error('SQLITE_FULL') } }, new AbortController().signal)
  await t.rejects(failing, /SQLITE_FULL/, 'the first failed write is the build\'s error')
  t.ok(writes <= 3, `no write after the failure but those already queued (${writes})`)
})

t.test('the lease: a fresh holder elsewhere holds it; a stale one, or an unreadable lock gone stale, is taken over; renewal keeps it', async (t) => {
  const file = path.join(tempDir(t, 'wmcp-lease-'), 'index.sqlite')
  const lock = `${file}.lock`

  fs.writeFileSync(lock, JSON.stringify({ pid: 1, host: 'another-host', since: 1 }))
  const held = acquireLease(file)
  fs.writeFileSync(lock, 'not json')
  const unreadable = acquireLease(file)
  const old = new Date(Date.now() - LEASE_STALE_MS - 1000)
  fs.utimesSync(lock, old, old)
  const stale = acquireLease(file)

  t.match(held, { heldBy: { pid: 1, host: 'another-host' } }, 'a live holder on another host')
  t.match(unreadable, { heldBy: { pid: 0, host: 'unknown' } }, 'an unreadable lock is held until it goes stale')
  t.ok('release' in stale, 'a lock not renewed for a minute is taken over')
  if (!('release' in stale)) return
  stale.release()

  const renewed = acquireLease(file, Date.now(), 20)
  fs.utimesSync(lock, old, old)
  await waitUntil(() => fs.statSync(lock).mtimeMs > old.getTime(), 'the lease to be renewed')
  t.ok(fs.statSync(lock).mtimeMs > Date.now() - 5000, 'renewed in the background')
  if ('release' in renewed) renewed.release()
  fs.writeFileSync(lock, JSON.stringify({ pid: 1, host: 'another-host', since: 1 }))
  if ('release' in renewed) renewed.release()
  t.ok(fs.existsSync(lock), 'a release never removes a lock another holder made since')
  fs.rmSync(lock)

  takeOver(lock, undefined)
  t.notOk(fs.existsSync(lock), 'a lock someone else moved first: nothing to do')
  fs.writeFileSync(lock, JSON.stringify({ pid: 7, host: 'h', since: 7 }))
  takeOver(lock, { pid: 6, host: 'h', since: 6 })
  t.same(JSON.parse(fs.readFileSync(lock, 'utf8')), { pid: 7, host: 'h', since: 7 }, 'a lock made anew since it was judged is put back')
  t.same(fs.readdirSync(path.dirname(file)), ['index.sqlite.lock'], 'nothing left aside')
  fs.rmSync(lock)

  // A lock that vanishes between the failed create and the look at it (here: a link to nothing) is taken.
  fs.symlinkSync(path.join(path.dirname(file), 'nowhere'), lock)
  const dangling = acquireLease(file)
  t.ok('release' in dangling, 'a lock that is not there is taken')
  t.match(JSON.parse(fs.readFileSync(lock, 'utf8')), { pid: process.pid })
  if ('release' in dangling) dangling.release()
  t.throws(() => acquireLease(path.join(path.dirname(file), 'missing', 'index.sqlite')), { code: 'ENOENT' }, 'a folder that is not there is an error, not a holder')

  // The folder goes away under a held lease: renewal stops quietly, the lease lapses with it.
  const gone = path.join(tempDir(t, 'wmcp-lease-gone-'), 'sub')
  fs.mkdirSync(gone)
  // The renewal is seen through fs.utimesSync (the module's own fs object): one that finds the lock gone.
  const renewals: string[] = []
  const utimes = fs.utimesSync
  fs.utimesSync = (at, atime, mtime) => {
    renewals.push(String(at))
    utimes(at, atime, mtime)
  }
  t.teardown(() => { fs.utimesSync = utimes })
  const orphan = acquireLease(path.join(gone, 'index.sqlite'), Date.now(), 10)
  fs.rmSync(gone, { recursive: true })
  await waitUntil(() => renewals.includes(path.join(gone, 'index.sqlite.lock')), 'a renewal after the folder went')
  t.ok('release' in orphan)
  if ('release' in orphan) orphan.release()

  // A lease named by a token: dropLease lets go of that holder's only.
  const named = acquireLease(file, Date.now(), undefined, 'mine')
  t.match(JSON.parse(fs.readFileSync(lock, 'utf8')), { pid: process.pid, token: 'mine' })
  dropLease(file, 'another')
  t.ok(fs.existsSync(lock), 'another token\'s lease stays')
  dropLease(file, 'mine')
  t.notOk(fs.existsSync(lock), 'its own is let go')
  dropLease(file, 'mine')
  if ('release' in named) named.release()
})

t.test('the reader refuses what it cannot open; the writer marks a finished scan; free space of a folder that is not there', async (t) => {
  const dir = tempDir(t, 'wmcp-store-')
  fs.mkdirSync(path.join(dir, 'a-folder.sqlite'))
  const file = path.join(dir, 'index.sqlite')
  const writer = openIndexWriter(sqlite, file)

  writer.finished(1234)
  const reader = openIndexReader(sqlite, file)

  t.equal(openIndexReader(sqlite, path.join(dir, 'a-folder.sqlite')), undefined, 'a folder where the file should be')
  t.match(reader?.state(), { complete: true, built: 1234 })
  reader?.close()
  writer.close()
  t.equal(freeBytes(path.join(dir, 'missing')), undefined)
  t.type(freeBytes(dir), 'number')
  t.same(buildSettingsOf({ indexThreads: 0, indexMaxMb: 0 }, 8), { threads: 2 }, 'one thread per core, at most 2')
  t.same(buildSettingsOf({ indexThreads: 0, indexMaxMb: 0 }, 1), { threads: 1 })
  t.same(buildSettingsOf({ indexThreads: 3, indexMaxMb: 5 }), { threads: 3, maxBytes: 5 * 1024 * 1024 })
})

t.test('source text in a legacy charset is decoded through the line reader', async (t) => {
  const root = tempDir(t, 'wmcp-latin1-')
  fs.writeFileSync(path.join(root, 'legacy.c'), Buffer.from('/* caf\xe9 cr\xe8me br\xfbl\xe9e */\nint x;\n', 'latin1'))
  const workspace = await createWorkspace({ root, log })
  const handle = await workspace.openFile(await workspace.resolve('legacy.c'))
  t.teardown(() => handle.close())

  const text = await readSourceText(workspace, handle, (await handle.stat()).size, new AbortController().signal)

  t.equal(text, '/* café crème brûlée */\nint x;\n'.replace(/\n$/, ''), 'decoded, line by line')
})

t.test('the index\'s parsers sleep mid-parse while the yield flag is up, and go on once it clears', async (t) => {
  const flag = new Int32Array(new SharedArrayBuffer(4))
  const parser = createSymbolParser(where, { niceness: 19, yieldFlag: flag })
  const language = symbolLanguageOf('big.c') as SymbolLanguage
  const text = Array.from({ length: 20_000 }, (_, i) => `int f${i} (int a) { return a + ${i}; }`).join('\n')
  await parser.definitions('int warm (void) { return 0; }', language)

  Atomics.store(flag, 0, 1)
  let finished = false
  const parsing = parser.definitions(text, language).finally(() => { finished = true })
  // Time is the point: a parse that honours the flag cannot end while it is up, one that ignored it could (here
  // ~1.5 s under load, less on a quiet machine). So this check never fails wrongly; held up longer, it would
  // catch an ignored flag more often, at that cost in wall time.
  await new Promise(resolve => setTimeout(resolve, 300))
  const endedWhileUp = finished
  Atomics.store(flag, 0, 0)
  Atomics.notify(flag, 0)
  const parsed = await parsing

  t.equal(parsed.definitions.length, 20_000)
  t.equal(endedWhileUp, false, 'it waited for the flag to clear')
})

t.test('written entries land whole: a build of real files through the index\'s parser thread, the same entry as made in this thread', async (t) => {
  const root = tempDir(t, 'wmcp-real-build-')
  fs.writeFileSync(path.join(root, 'a.py'), 'def handler(request):\n    "Answers a request."\n    return request\n\nhandler(None)\n')
  const workspace = await createWorkspace({ root, log })
  const threaded = createIndexParser(where, {})
  t.teardown(async () => { await threaded.close() })
  const built = async (parser: IndexParser): Promise<FileEntry[]> => {
    const written: FileEntry[] = []
    await parseAndWrite([{ relative: 'a.py', fsPath: path.join(root, 'a.py') }], { workspace, parsers: [parser], write: (entries) => { written.push(...entries) } }, new AbortController().signal)
    return written
  }

  const written = await built(threaded)
  t.match(written, [{ path: path.join(root, 'a.py'), language: 'Python', symbols: [{ name: 'handler', kind: 'function' }], chunks: [{ symbol: 'handler', fields: { name: 'handler', body: /answer/ } }] }])
  t.ok(written[0].references !== undefined && written[0].references.sites.byteLength > 0, 'the uses of names come back with it')
  t.same(written, await built(entriesHere(createSymbolParser(where))), 'what the thread sends back is what entryOf makes here')
})

t.test('the build: a binary file kept empty; a write failing while another waits; an abort during a pause or a parse', async (t) => {
  const root = tempDir(t, 'wmcp-build-edges-')
  fs.writeFileSync(path.join(root, 'blob.c'), Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0, 1, 2, 0]))
  for (let i = 0; i < 4; i++) fs.writeFileSync(path.join(root, `f${i}.c`), `int f${i} (void) { return 0; }\n`)
  const workspace = await createWorkspace({ root, log })
  const file = (relative: string): { relative: string, fsPath: string } => ({ relative, fsPath: path.join(root, relative) })
  const written: FileEntry[] = []
  const heavy = entriesHere({
    definitions: async () => {
      return { definitions: Array.from({ length: 15_000 }, (_, i) => ({ kind: 'function', name: `d${i}`, start: 0, nameRow: 0, end: 0, endColumn: 1, from: i, to: i + 1 })), hasErrors: false }
    }
  })

  await parseAndWrite([file('blob.c')], { workspace, parsers: [heavy], write: (entries) => { written.push(...entries) } }, new AbortController().signal)
  t.match(written, [{ language: '-', chunks: [], symbols: [] }], 'a binary file is remembered with nothing in it')

  // The first write fails slowly while the second lane's batch waits behind it: that one is never written.
  let writes = 0
  let read = 0
  // A file is done with once its handle is closed; the lane then queues its full batch without another wait.
  const counting = {
    ...workspace,
    openFile: async (...args: Parameters<typeof workspace.openFile>) => {
      const handle = await workspace.openFile(...args)
      const close = handle.close.bind(handle)
      handle.close = async () => { await close(); read++ }
      return handle
    }
  }
  const slowFail = async (): Promise<void> => {
    writes++
    // Fails once the other lane's batch is queued behind this write: its file read and closed, then a turn later.
    await waitUntil(() => read >= 2, 'the other lane to be done with its file')
    await new Promise(resolve => setImmediate(resolve))
    throw new Error('EIO')
  }
  await t.rejects(parseAndWrite(['f0.c', 'f1.c', 'f2.c', 'f3.c'].map(file), { workspace: counting, parsers: [heavy, heavy], write: slowFail }, new AbortController().signal), /EIO/)
  t.equal(writes, 1, 'no write after the one that failed')

  const duringPause = new AbortController()
  await t.rejects(parseAndWrite(['f0.c', 'f1.c'].map(file), { workspace, parsers: [heavy], write: () => {}, pause: async () => { duringPause.abort() } }, duringPause.signal), { name: 'AbortError' }, 'aborted while it waited for a call')
  const duringParse = new AbortController()
  const refusing = entriesHere({ definitions: async () => { duringParse.abort(); throw new Error('CANCELLED') } })
  const skipped: string[] = []
  await t.rejects(parseAndWrite(['f0.c', 'f1.c'].map(file), { workspace, parsers: [refusing], write: () => {}, skipped: (f) => skipped.push(f.relative) }, duringParse.signal), { name: 'AbortError' })
  t.same(skipped, [], 'a parse that failed because of the abort is not a skipped file')
})

t.test('a missing file is no reader; a staging writer keeps no log beside the file and honours its size limit', async (t) => {
  const dir = tempDir(t, 'wmcp-staging-')
  const file = path.join(dir, 'staging.sqlite')

  t.equal(openIndexReader(sqlite, path.join(dir, 'missing.sqlite')), undefined)
  const writer = openIndexWriter(sqlite, file, { journal: 'delete', maxBytes: 1 })
  await writer.write([{ path: '/r/a.ts', size: 1, mtimeMs: 1, language: 'TypeScript', chunks: [{ start: 1, end: 1, symbol: 'a', kind: 'function', fields: { name: 'a', head: '', path: '', body: 'a' }, hash: 'h' }], symbols: [] }])
  await t.rejects(writer.write([{ path: '/r/b.ts', size: 1, mtimeMs: 1, language: 'TypeScript', chunks: [{ start: 1, end: 1, symbol: 'b', kind: 'function', fields: { name: 'b', head: '', path: '', body: Array.from({ length: 40_000 }, (_, i) => `word${i}`).join(' ') }, hash: 'h2' }], symbols: [] }]), /database or disk is full/, 'past 64 pages (the least it allows): SQLITE_FULL')
  writer.close()

  t.same(fs.readdirSync(dir), ['staging.sqlite'], 'no -wal or -shm: whole on its own')
})

t.test('a completion mark the file refuses is rolled back whole: the writer goes on', async (t) => {
  const file = path.join(tempDir(t, 'wmcp-refused-'), 'index.sqlite')
  const writer = openIndexWriter(sqlite, file)
  t.teardown(() => writer.close())
  const other = new sqlite.DatabaseSync(file)
  other.exec("CREATE TRIGGER refuse BEFORE INSERT ON meta WHEN NEW.key = 'complete' BEGIN SELECT RAISE(ABORT, 'refused'); END")
  t.throws(() => writer.finished(1), /refused/)
  other.exec('DROP TRIGGER refuse')
  other.close()
  writer.finished(2)
  t.equal(writer.counts().files, 0, 'no transaction was left open')
})

t.test('a staging file locked past the busy wait by its writer\'s commit: the reader answers what it read last', async (t) => {
  const file = path.join(tempDir(t, 'wmcp-locked-'), 'staging.sqlite')
  const writer = openIndexWriter(sqlite, file, { journal: 'delete' })
  await writer.write([{ path: '/r/a.ts', size: 1, mtimeMs: 1, language: 'TypeScript', chunks: [{ start: 1, end: 1, symbol: 'a', kind: 'function', fields: { name: 'a', head: '', path: '', body: 'a' }, hash: 'h' }], symbols: [] }])
  writer.close()
  const reader = followIndexFile(sqlite, file, false, 0)
  t.teardown(() => reader.close())
  const before = reader.state()
  t.equal(before.counts.files, 1)

  // What a commit holds in rollback-journal mode: the exclusive lock, here for longer than the reader's wait.
  const holder = new sqlite.DatabaseSync(file)
  holder.exec('BEGIN EXCLUSIVE; INSERT INTO meta (key, value) VALUES (\'held\', \'1\')')
  t.same(reader.state(), before, 'the last state, not "database is locked"')
  holder.exec('ROLLBACK')
  holder.close()
  t.same(reader.state(), before, 'read again once the lock is gone')

  const editor = new sqlite.DatabaseSync(file)
  editor.exec('UPDATE meta SET value = \'{not json\' WHERE key = \'counts\'')
  editor.close()
  t.throws(() => reader.state(), SyntaxError, 'any other error is no lock: it is thrown, not hidden behind the last state')
  t.same([5, 6, 261, 13, 8].map(errcode => isLocked({ errcode })), [true, true, true, false, false], 'BUSY, LOCKED and their extended codes are locks; FULL and READONLY are not')
  t.equal(isLocked(new Error('database is locked')), false, 'told by the code, not the text')
})
