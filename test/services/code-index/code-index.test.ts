import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import pino from 'pino'
import t, { type Test } from 'tap'
import { chunkFile, MAX_CHUNK_LINES } from '../../../src/services/code-index/chunker.js'
import { codeTokens, matchExpression, queryTerms, searchTokens } from '../../../src/services/code-index/code-tokens.js'
import { createCodeIndex, type CodeIndex, type CodeIndexOptions } from '../../../src/services/code-index/code-index.js'
import { configuredRoots } from '../../../src/base/config.js'
import { codeIndexService } from '../../../src/services/code-index/index.js'
import { defaultStateDir, indexLocation, removeTemporaryIndex } from '../../../src/services/code-index/index-file.js'
import { loadSqlite, NOT_INDEXED, SCHEMA_VERSION, type ChunkFields, type FileEntry } from '../../../src/services/code-index/index-schema.js'
import { openIndexReader, type IndexReader } from '../../../src/services/code-index/index-reader.js'
import { openIndexWriter } from '../../../src/services/code-index/index-writer.js'
import { parseAndWrite } from '../../../src/services/code-index/index-build.js'
import { entryOf } from '../../../src/services/code-index/index-entry.js'
import type { OutlineSymbol } from '../../../src/services/symbols/outline.js'
import { createSymbolParser, locateTreeSitter, type SymbolParser, type TreeSitterLocation } from '../../../src/services/symbols/parser.js'
import { createWorkspace, type WorkspaceService } from '../../../src/services/workspace/workspace.js'
import { tempDir } from '../../helpers/workspace-fixture.js'
import { clockPasses, waitUntil } from '../../helpers/wait.js'
import { entriesHere } from '../../helpers/index-parsers.js'

const log = pino({ level: 'silent' })
const sqlite = loadSqlite() as NonNullable<ReturnType<typeof loadSqlite>>
const where = locateTreeSitter() as TreeSitterLocation

t.test('code tokens: identifiers whole and split, one-letter words dropped, long noise dropped', async (t) => {
  t.same(codeTokens('retryFailedUpload(x)'), ['retryfailedupload', 'retry', 'failed', 'upload'])
  t.same(codeTokens('retry_failed_upload'), ['retry_failed_upload', 'retry', 'failed', 'upload'])
  t.same(codeTokens('HTTPServer upload2 $scope i'), ['httpserver', 'http', 'server', 'upload2', 'upload', 'scope'])
  t.same(codeTokens(`id ${'a'.repeat(41)} 42`), ['id', '42'])
  t.same(queryTerms('Retry upload, retry!'), ['retry', 'upload'])
  t.equal(matchExpression(['or', 'near', 'x_y']), '"or" OR "near" OR "x_y"', 'FTS5 keywords are quoted terms, never syntax')
  t.equal(matchExpression(['a1', 'b2'], 'AND'), '"a1" AND "b2"')
})

const symbol = (name: string, line: number, endLine: number, depth = 1, kind = 'function', container?: string): OutlineSymbol =>
  ({ kind: kind as OutlineSymbol['kind'], name, line, endLine, depth, signature: name, ...(container === undefined ? {} : { container }) })

t.test('chunks: definitions, members of a big one, windows, small neighbours merged, blank gaps dropped', async (t) => {
  const lines = (n: number, blankFrom = Infinity): string[] => [...Array.from({ length: n }, (_, i) => i + 1 >= blankFrom ? '' : `line ${i + 1}`), '']
  t.same(chunkFile([''], []), [], 'an empty file has no chunks')
  t.same(chunkFile([], []), [])
  t.same(chunkFile(lines(20), [symbol('f', 5, 8)]), [{ start: 1, end: 20, symbol: 'f', kind: 'function' }], 'code before a small function takes its name')
  t.same(chunkFile(lines(5), []), [{ start: 1, end: 5, symbol: '', kind: 'code' }])
  t.same(chunkFile(['', '', '  ', ''], []), [], 'blank lines alone make no chunk')
  // Two small functions merge with the gap after them; a big one stands alone; a chunk of blank lines alone makes nothing.
  const file = lines(120, 100)
  t.same(chunkFile(file, [symbol('a', 1, 5), symbol('b', 6, 10), symbol('big', 20, 70)]), [
    { start: 1, end: 19, symbol: 'a', kind: 'function' },
    { start: 20, end: 70, symbol: 'big', kind: 'function' },
    { start: 71, end: 120, symbol: '', kind: 'code' }
  ])
  // A class too big for one chunk is split at its methods; its head and tail join their neighbours.
  const big = chunkFile(lines(200), [symbol('K', 1, 200, 1, 'class'), symbol('m1', 10, 80, 2, 'method', 'K'), symbol('m2', 81, 150, 2, 'method', 'K')])
  t.same(big.map(c => [c.start, c.end, c.symbol]), [[1, 9, 'K'], [10, 69, 'K.m1'], [70, 80, 'K.m1'], [81, 140, 'K.m2'], [141, 200, 'K.m2']])
  t.ok(big.every(c => c.end - c.start + 1 <= MAX_CHUNK_LINES), 'no chunk longer than the limit')
  t.same(big.map(c => c.start), [...new Set(big.map(c => c.start))], 'no line in two chunks')
  t.equal(big[0].start, 1)
  t.equal(big.at(-1)?.end, 200, 'every line is in a chunk')
  for (let i = 1; i < big.length; i++) t.equal(big[i].start, big[i - 1].end + 1, 'chunks are contiguous')
  // A long function without members is cut into windows.
  const long = chunkFile(lines(130), [symbol('f', 1, 130)])
  t.same(long.map(c => [c.start, c.end]), [[1, 60], [61, 120], [121, 130]])
  t.same(new Set(long.map(c => c.symbol)), new Set(['f']))
})

function entry (file: string, symbols: Array<[string, string, number]>, words: string): FileEntry {
  return {
    path: file,
    size: 1,
    mtimeMs: 1,
    language: 'TypeScript',
    chunks: [{ start: 1, end: 5, symbol: symbols[0]?.[0] ?? '', kind: 'function', fields: { name: '', head: '', path: '', body: searchTokens(words).join(' ') }, hash: `h-${file}` }],
    symbols: symbols.map(([name, kind, line]) => ({ name, kind: kind as OutlineSymbol['kind'], line, endLine: line + 1, depth: 1, signature: `${kind} ${name}` }))
  }
}

t.test('the store: write, replace, remove, name matching, scopes, BM25 ranking, schema upgrades', async (t) => {
  const dir = tempDir(t, 'wmcp-store-')
  const file = path.join(dir, 'index.sqlite')
  const store = openIndexWriter(sqlite, file)
  const reader = openIndexReader(sqlite, file) as IndexReader
  t.teardown(() => reader.close())
  await store.write([
    entry('/r/src/upload.ts', [['retryFailedUpload', 'function', 3], ['Uploader', 'class', 10]], 'retry failed upload retryfailedupload'),
    entry('/r/src2/other.ts', [['retry', 'function', 1]], 'retry'),
    entry('/r/src/odd.ts', [['a%b_c', 'function', 1]], 'upload upload upload')
  ])
  t.same(store.counts(), { files: 3, chunks: 3, symbols: 4 })
  t.same(store.files().map(f => f.path).sort(), ['/r/src/odd.ts', '/r/src/upload.ts', '/r/src2/other.ts'])
  t.same(reader.findSymbols('retry', 'exact', undefined, undefined, 10).map(r => r.path), ['/r/src2/other.ts'])
  t.same(reader.findSymbols('retry', 'prefix', undefined, undefined, 10).map(r => r.name), ['retryFailedUpload', 'retry'])
  t.same(reader.findSymbols('retry', 'prefix', undefined, '/r/src', 10).map(r => r.name), ['retryFailedUpload'], 'src does not hold src2')
  t.same(reader.findSymbols('upload', 'substring', 'class', undefined, 10).map(r => r.name), ['Uploader'])
  t.same(reader.findSymbols('upload', 'substring', 'macro', undefined, 10), [])
  t.same(reader.findSymbols('%b_', 'substring', undefined, undefined, 10).map(r => r.name), ['a%b_c'], 'LIKE wildcards are literal')
  t.same(reader.findSymbols('_', 'substring', undefined, undefined, 10).map(r => r.name), ['a%b_c'])
  t.match(reader.findSymbols('uploader', 'exact', 'class', '/r/src/upload.ts', 1), [{ name: 'Uploader', kind: 'class', line: 10, endLine: 11, container: null, signature: 'class Uploader' }])

  const ranked = reader.searchChunks(['retry', 'upload'], undefined, 10)
  t.same(ranked.map(r => r.path), ['/r/src/upload.ts', '/r/src/odd.ts', '/r/src2/other.ts'], 'every word first, then any, each by BM25')
  t.ok(ranked[1].score <= ranked[2].score, 'the "any" set in BM25 order')
  t.same(reader.searchChunks(['retry', 'upload'], undefined, 1).map(r => r.path), ['/r/src/upload.ts'], 'a full window needs no second query')
  t.same(reader.searchChunks(['retry', 'upload'], undefined, 2).map(r => r.path), ['/r/src/upload.ts', '/r/src/odd.ts'], 'the second query fills the window, no more')
  t.same(reader.searchChunks(['retry'], '/r/src2', 10).map(r => r.path), ['/r/src2/other.ts'])
  t.same(reader.searchChunks(['or', 'not'], undefined, 10), [], 'FTS5 keywords as terms are words, not operators')
  t.same(reader.searchChunks(['upload'], undefined, 1).length, 1, 'the limit')
  await store.write([entry('/r/src/upload.ts', [['renamed', 'function', 1]], 'renamed')])
  t.same(store.counts(), { files: 3, chunks: 3, symbols: 3 }, 'a file written again replaces what it had')
  t.same(reader.searchChunks(['failed'], undefined, 10), [], 'its old words are gone from the search')
  await store.remove(['/r/src2/other.ts', '/r/missing.ts'])
  t.same(store.counts(), { files: 2, chunks: 2, symbols: 2 })
  await t.rejects(store.write([{ ...entry('/r/x.ts', [], 'x'), chunks: [{ start: 1, end: 1, symbol: '', kind: 'code', fields: null as unknown as ChunkFields, hash: 'h' }], symbols: [{ name: null } as unknown as OutlineSymbol] }]))
  t.same(store.counts(), { files: 2, chunks: 2, symbols: 2 }, 'a failed batch leaves nothing half written')
  await store.write([{ ...entry('/r/blob.ts', [], 'blob'), language: NOT_INDEXED, chunks: [], symbols: [] }])
  t.same(store.counts(), { files: 2, chunks: 2, symbols: 2 }, 'a file kept with nothing in it is not counted')
  // The counts live in meta, changed with each write; an index without them (an older one) is counted once.
  const other = new sqlite.DatabaseSync(file)
  other.prepare("DELETE FROM meta WHERE key = 'counts'").run()
  other.close()
  t.same(store.counts(), { files: 2, chunks: 2, symbols: 2 }, 'counted again from the rows')
  await store.remove(['/r/blob.ts'])
  t.same(store.counts(), { files: 2, chunks: 2, symbols: 2 })
  store.close()

  // Another schema version: the index is emptied and rebuilt, never misread.
  const db = new sqlite.DatabaseSync(file)
  db.prepare("UPDATE meta SET value = 'old' WHERE key = 'schema'").run()
  db.close()
  // A second name for the old file tells whether it was removed (its link count drops) or emptied in place.
  const kept = `${file}.kept`
  fs.linkSync(file, kept)
  const reopened = openIndexWriter(sqlite, file)
  t.same(reopened.counts(), { files: 0, chunks: 0, symbols: 0 })
  t.equal(fs.statSync(kept).nlink, 1, 'the old file was removed, not emptied page by page')
  reopened.close()
  // A file that is no SQLite database at all takes the same way.
  const garbage = path.join(path.dirname(file), 'garbage.sqlite')
  fs.writeFileSync(garbage, 'not a database, '.repeat(512))
  const replaced = openIndexWriter(sqlite, garbage)
  t.same(replaced.counts(), { files: 0, chunks: 0, symbols: 0 })
  replaced.close()
  const fresh = new sqlite.DatabaseSync(file)
  t.same({ ...fresh.prepare("SELECT value FROM meta WHERE key = 'schema'").get() as object }, { value: SCHEMA_VERSION })
  fresh.close()
  t.equal(loadSqlite(() => { throw new Error('not installed') }), null)
})

/** The temporary index files this process made, each in its own folder (other processes' folders are skipped). */
function temporaryIndexesOfThisProcess (): string[] {
  const found: string[] = []
  for (const name of fs.readdirSync(os.tmpdir()).filter(n => n.startsWith('workspace-mcp-'))) {
    try {
      const folder = path.join(os.tmpdir(), name)
      for (const file of fs.readdirSync(folder)) if (file.endsWith(`-${process.pid}.sqlite`)) found.push(path.join(folder, file))
    } catch {
      // Not a folder, or another process's, removed meanwhile.
    }
  }
  return found
}

t.test('what the index thread stores of a file: outline, chunks, and words of the path and the symbol', async (t) => {
  const text = 'export function retryFailedUpload () {\n  return 1\n}\n'
  const parsed = await createSymbolParser(where).definitions(text, { name: 'TypeScript', grammar: 'tree-sitter-typescript.wasm', query: '(function_declaration name: (identifier) @name) @definition.function' })
  const stored = entryOf({ path: '/r/src/net/upload.ts', shown: 'src/net/upload.ts', size: text.length, mtimeMs: 5, language: 'TypeScript', text, definitions: parsed.definitions })
  t.match(stored, { path: '/r/src/net/upload.ts', size: text.length, mtimeMs: 5, symbols: [{ name: 'retryFailedUpload', line: 1, endLine: 3 }] })
  t.same(stored.chunks.map(c => [c.start, c.end, c.symbol]), [[1, 3, 'retryFailedUpload']])
  t.same(stored.chunks[0].fields, {
    name: 'retryfailedupload retri fail upload',
    head: 'export function retryfailedupload retri fail upload',
    path: 'src net upload ts',
    body: 'export function retryfailedupload retri fail upload return'
  }, 'the name, its head, the path and the text, each word in its searchable form (retry and retries are one)')
})

interface Built { root: string, index: CodeIndex }

async function built (t: Test, files: Record<string, string | Buffer>, options: Partial<CodeIndexOptions> = {}): Promise<Built> {
  const root = tempDir(t, 'wmcp-index-')
  for (const [name, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, name)), { recursive: true })
    fs.writeFileSync(path.join(root, name), content)
  }
  const workspace = await createWorkspace({ root, log })
  const file = path.join(tempDir(t, 'wmcp-state-'), 'index.sqlite')
  const index = createCodeIndex({ workspace, treeSitter: where, log, sqlite, file, ...options })
  t.teardown(() => index.close())
  return { root, index }
}

t.test('the index: built from what list_directory would show, kept fresh by rescans, waited for with progress', async (t) => {
  const { root, index } = await built(t, {
    'src/upload.ts': 'export function retryFailedUpload () {}\n',
    'src/server.py': 'class Server:\n    def serve(self):\n        pass\n',
    'src/legacy.py': Buffer.from('# caf\xe9 cr\xe8me br\xfbl\xe9e, \xe0 la fran\xe7aise\ndef legacy_latin1():\n    pass\n', 'latin1'),
    'README.md': '# not a source file\n',
    '.gitignore': 'build/\n',
    'build/out.js': 'function ignoredFunction () {}\n',
    '.hidden/secret.ts': 'export function hiddenFunction () {}\n',
    'blob.c': Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0, 0, 1]),
    'huge.c': 'int huge(void) { return 0; }\n'.padEnd(2 * 1024 * 1024 + 10, ' ')
  }, { staleMs: 0 })
  fs.symlinkSync(os.tmpdir(), path.join(root, 'out-link'))
  t.equal(index.status().state, 'building', 'nothing happens before start()')
  t.same(index.findSymbols('retryfailedupload', 'exact', undefined, undefined, 10), [], 'queries before start answer nothing')
  t.same(index.searchChunks(['retry'], undefined, 10), [])
  const progress: Array<[number, number]> = []
  t.equal(await index.ready(60_000, new AbortController().signal, (done, total) => progress.push([done, total])), true)
  t.ok(progress.length > 0 && progress.at(-1)?.[0] === progress.at(-1)?.[1], 'progress reported up to done')
  t.match(index.status(), { state: 'ready', files: 3, symbols: 4, pending: 4, done: 4, lastScan: Number }, 'the binary .c counts as done, not as indexed')
  t.match(index.findSymbols('legacy_latin1', 'exact', undefined, undefined, 1), [{ line: 2, signature: 'def legacy_latin1():' }], 'text in a legacy charset is decoded before parsing')
  t.same(index.findSymbols('serve', 'exact', undefined, undefined, 10).map(r => [r.path, r.kind]), [[path.join(root, 'src/server.py'), 'method']])
  t.same(index.findSymbols('ignoredfunction', 'exact', undefined, undefined, 10), [], 'ignored files are not indexed')
  t.same(index.findSymbols('hiddenfunction', 'exact', undefined, undefined, 10), [], 'hidden files are not indexed')
  t.same(index.findSymbols('huge', 'exact', undefined, undefined, 10), [], 'files over 2 MB are skipped')

  // A change, a new file and a deletion: the next call that finds the scan stale starts a rescan.
  const initial = index.status().lastScan
  fs.writeFileSync(path.join(root, 'src/upload.ts'), 'export function uploadAgain () {}\n')
  fs.utimesSync(path.join(root, 'src/upload.ts'), new Date(), new Date(Date.now() + 5000))
  fs.writeFileSync(path.join(root, 'src/new.go'), 'package main\n\nfunc Fresh() {}\n')
  fs.rmSync(path.join(root, 'src/server.py'))
  await clockPasses(initial as number)
  t.equal(await index.ready(1000, new AbortController().signal), true, 'ready at once: the rescan runs behind')
  await waitUntil(() => index.findSymbols('fresh', 'exact', undefined, undefined, 10).length > 0, 'the new file\'s symbol')
  t.same(index.findSymbols('fresh', 'exact', undefined, undefined, 10).map(r => r.name), ['Fresh'])
  // Its symbols are readable before the scan has ended: wait for the end, so the next scan is the one measured.
  await waitUntil(() => index.status().lastScan !== initial, 'the rescan to end')
  t.same(index.findSymbols('uploadagain', 'exact', undefined, undefined, 10).map(r => r.name), ['uploadAgain'])
  t.same(index.findSymbols('retryfailedupload', 'exact', undefined, undefined, 10), [], 'the changed file lost its old symbol')
  t.same(index.findSymbols('serve', 'exact', undefined, undefined, 10), [], 'the deleted file is forgotten')
  t.match(index.status(), { files: 3, pending: 2, done: 2 }, 'only the changed files were parsed again')
  t.same(index.searchChunks(['fresh'], undefined, 5).map(r => r.path), [path.join(root, 'src/new.go')])
  // Nothing changed: a rescan parses nothing and writes nothing.
  const before = index.status().lastScan as number
  await clockPasses(before)
  await index.ready(1000, new AbortController().signal)
  await waitUntil(() => index.status().lastScan !== before, 'the rescan to end')
  t.match(index.status(), { files: 3, pending: 0, done: 0 })
})

t.test('the index: a wait that times out or is aborted answers false; a thread that fails marks it failed', async (t) => {
  // Enough files for two write batches.
  const { index } = await built(t, Object.fromEntries(Array.from({ length: 130 }, (_, i) => [`f${i}.ts`, `export function f${i} () {}\n`])), { threads: 2 })
  t.equal(await index.ready(1, new AbortController().signal), false, 'not ready within 1 ms')
  const controller = new AbortController()
  const aborted = index.ready(60_000, controller.signal)
  controller.abort()
  t.equal(await aborted, false, 'an aborted wait ends at once')
  index.start()
  t.equal(await index.ready(60_000, new AbortController().signal), true)
  t.equal(index.status().files, 130, 'two parser lanes, every file once')
  t.equal(index.findSymbols('f', 'prefix', undefined, undefined, 1000).length, 130)

  // Closed while its first scan runs: the scan stops quietly, and nothing starts after.
  const closing = await built(t, Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`g${i}.py`, `def g${i}():\n    pass\n`])))
  closing.index.start()
  await closing.index.close()
  t.match(closing.index.status(), { state: 'building' }, 'not failed: it was stopped')
  t.equal(await closing.index.ready(1, new AbortController().signal), false, 'a closed index never scans again')
  const finished = await built(t, { 'a.py': 'def a():\n    pass\n' }, { staleMs: 0 })
  t.equal(await finished.index.ready(60_000, new AbortController().signal), true)
  const last = finished.index.status().lastScan
  await finished.index.close()
  await clockPasses(last as number)
  await finished.index.ready(60_000, new AbortController().signal)
  t.equal(finished.index.status().lastScan, last, 'a call finding a closed index stale starts no scan')

  const dir = tempDir(t, 'wmcp-bad-worker-')
  fs.writeFileSync(path.join(dir, 'worker.mjs'), 'throw new Error("the index thread could not start")\n')
  const failing = await built(t, { 'a.ts': 'export function a () {}\n' }, { workerUrl: new URL(`file://${dir}/worker.mjs`) })
  t.equal(await failing.index.ready(60_000, new AbortController().signal), false)
  t.match(failing.index.status(), { state: 'failed', error: /the index thread could not start/ })
  // A later call tries again; the dead thread fails that scan at once (close() at teardown waits for it: no hang).
  t.equal(await failing.index.ready(60_000, new AbortController().signal), false)
  fs.writeFileSync(path.join(dir, 'refusing.mjs'), "import { parentPort } from 'node:worker_threads'\nparentPort.on('message', (m) => parentPort.postMessage({ id: m.id, error: 'disk full' }))\n")
  const refusing = await built(t, { 'a.ts': 'export function a () {}\n' }, { workerUrl: new URL(`file://${dir}/refusing.mjs`) })
  t.equal(await refusing.index.ready(60_000, new AbortController().signal), false)
  t.match(refusing.index.status(), { state: 'failed', error: 'disk full' }, 'a write the thread refused fails the scan')
  const unstartable = await built(t, { 'a.ts': 'export function a () {}\n' }, { workerUrl: new URL('https://127.0.0.1/worker.mjs') })
  t.equal(await unstartable.index.ready(60_000, new AbortController().signal), false)
  t.match(unstartable.index.status(), { state: 'failed', error: /file/ }, 'a thread that cannot even be made fails the scan with why')
})

t.test('the build: a file that grew past the limit since the walk is remembered, not parsed; one the parser gives up on is passed by', async (t) => {
  const root = tempDir(t, 'wmcp-build-')
  for (const name of ['grown.ts', 'good.ts', 'bad.ts']) fs.writeFileSync(path.join(root, name), `export function ${name.slice(0, -3)} () {}\n`)
  const real = await createWorkspace({ root, log })
  // The walk saw it small; it grows before the read, whose own size check is what keeps it out.
  const workspace: WorkspaceService = {
    ...real,
    openFile: async (resolved, field) => {
      if (resolved.relative === 'grown.ts') fs.writeFileSync(path.join(root, 'grown.ts'), 'export function grown () {}\n'.padEnd(2 * 1024 * 1024 + 10, ' '))
      return await real.openFile(resolved, field)
    }
  }
  const parser = createSymbolParser(where)
  const picky: Pick<SymbolParser, 'definitions'> = { definitions: async (text, language, signal) => text.includes('bad') ? await Promise.reject(new Error('PARSE_FAILED')) : await parser.definitions(text, language, signal) }
  const written: FileEntry[] = []
  const skipped: string[] = []
  const done: number[] = []
  const changed = ['grown.ts', 'good.ts', 'bad.ts'].map(relative => ({ relative, fsPath: path.join(root, relative) }))

  await parseAndWrite(changed, { workspace, parsers: [entriesHere(picky)], write: (entries) => { written.push(...entries) }, skipped: (file) => skipped.push(file.relative), progress: (n) => done.push(n) }, new AbortController().signal)

  t.same(written.map(e => [path.basename(e.path), e.language, e.symbols.map(s => s.name)]).sort(), [['good.ts', 'TypeScript', ['good']], ['grown.ts', NOT_INDEXED, []]])
  t.same(skipped, ['bad.ts'], 'the next scan tries it again')
  t.equal(done.at(-1), 3, 'every file counted as done')
  await t.rejects(parseAndWrite(changed, { workspace, parsers: [entriesHere(parser)], write: () => { throw new Error('disk full') } }, new AbortController().signal), /disk full/, 'a write that fails stops the build with its error')
})

t.test('the index service: off, not installed, a state folder it cannot write', async (t) => {
  const { root } = await built(t, {})
  const workspace = await createWorkspace({ root, log })
  const config = { codeIndex: 'on' as const, stateDir: tempDir(t, 'wmcp-statedir-'), root, roots: [], indexMaxMb: 0, indexThreads: 1, stateMaxAgeDays: 30, stateMaxMb: 0 }
  const replica = codeIndexService({ ...config, codeIndex: 'shared', stateDir: path.join(config.stateDir, 'not-made') }, workspace, log) as CodeIndex
  t.equal(await replica.ready(1, new AbortController().signal), false)
  t.match(replica.status(), { state: 'unavailable', problem: { kind: 'missing' } }, 'shared: read only, its folder never made')
  t.notOk(fs.existsSync(path.join(config.stateDir, 'not-made')))
  await replica.close()
  t.equal(codeIndexService({ ...config, codeIndex: 'off' }, workspace, log), undefined)
  const warnings: Array<[object, string]> = []
  const warnLog = { warn: (fields: object, msg: string) => warnings.push([fields, msg]) } as unknown as typeof log
  const glibc = new Error('/lib/x86_64-linux-gnu/libc.so.6: version `GLIBC_2.38\' not found')
  t.equal(codeIndexService(config, workspace, warnLog, { sqlite: null }), undefined)
  t.equal(codeIndexService(config, workspace, warnLog, { treeSitter: null }), undefined)
  t.equal(codeIndexService(config, workspace, warnLog, { requireSqlite: () => { throw glibc } }), undefined)
  t.same(warnings, [
    [{}, '@photostructure/sqlite is not installed or does not load here: find_symbol and search_code disabled'],
    [{}, 'web-tree-sitter is not installed or does not load here: find_symbol and search_code disabled'],
    [{ err: glibc }, '@photostructure/sqlite is not installed or does not load here: find_symbol and search_code disabled']
  ], 'a binding that does not load says why in the same line')
  const service = codeIndexService(config, workspace, log) as CodeIndex
  t.teardown(() => service.close())
  fs.writeFileSync(path.join(root, 'a.rs'), 'fn main() {}\n')
  t.equal(await service.ready(60_000, new AbortController().signal), true)
  t.equal(service.findSymbols('main', 'exact', undefined, undefined, 1).length, 1)
  t.match(fs.readdirSync(config.stateDir), [/^index-[0-9a-f]{16}\.sqlite$/], 'one file per set of roots in the state folder')

  const blocked = path.join(tempDir(t, 'wmcp-blocked-'), 'a-file')
  fs.writeFileSync(blocked, '')
  const temporary = indexLocation(blocked, configuredRoots({ root, roots: [] }), log)
  t.match(temporary, { temporary: true, file: new RegExp(`^${os.tmpdir()}/workspace-mcp-[^/]+/workspace-mcp-index-[0-9a-f]{16}-${process.pid}\\.sqlite$`) })
  t.equal(fs.statSync(path.dirname(temporary.file)).mode & 0o777, 0o700, 'in a folder of its own that only this user can enter')
  removeTemporaryIndex(temporary.file)
  const onTemp = codeIndexService({ ...config, stateDir: blocked }, workspace, log) as CodeIndex
  t.equal(await onTemp.ready(60_000, new AbortController().signal), true)
  const [onTempFile] = temporaryIndexesOfThisProcess()
  t.ok(onTempFile !== undefined && fs.existsSync(onTempFile), 'the temporary index exists while the process runs')
  await onTemp.close()
  removeTemporaryIndex(onTempFile)
  t.notOk(fs.existsSync(path.dirname(onTempFile)), 'its folder goes with it')
  removeTemporaryIndex(path.join(os.tmpdir(), 'not-ours', 'x.sqlite'))
  t.ok(fs.existsSync(os.tmpdir()), 'a file not in a folder of its own leaves the folder alone')
  const savedTmp = process.env.TMPDIR
  process.env.TMPDIR = blocked
  const noPrivate = indexLocation(blocked, configuredRoots({ root, roots: [] }), log)
  if (savedTmp === undefined) delete process.env.TMPDIR
  else process.env.TMPDIR = savedTmp
  t.equal(path.dirname(noPrivate.file), blocked, 'no private folder can be made: the temporary folder itself, as before')
  t.equal(defaultStateDir({ XDG_STATE_HOME: '/x/state' }), '/x/state/workspace-mcp')
  t.equal(defaultStateDir({ XDG_STATE_HOME: 'relative' }), path.join(os.homedir(), '.local', 'state', 'workspace-mcp'), 'a relative XDG_STATE_HOME is ignored, as the spec says')
  t.equal(indexLocation('', [{ name: 'r', path: root }], log).temporary, false, 'the default state folder')
})

t.test('codeIndex watch: a change in an indexed folder is scanned in by itself; the thread\'s notices are heeded', async (t) => {
  const { root, index } = await built(t, { 'src/a.ts': 'export function first () {}\n' }, { watch: true })
  t.equal(await index.ready(60_000, new AbortController().signal), true)
  t.equal(index.findSymbols('second', 'exact', undefined, undefined, 1).length, 0)
  fs.writeFileSync(path.join(root, 'src', 'b.ts'), 'export function second () {}\n')
  // No call asks (the last scan is not stale): only the watcher can bring the new file in.
  await waitUntil(() => index.findSymbols('second', 'exact', undefined, undefined, 1).length > 0, 'the watcher to bring the new file in', 60_000, 50)
  t.match(index.findSymbols('second', 'exact', undefined, undefined, 1), [{ name: 'second' }])
  // Rescans of the changed folders alone: a folder made with a file in it, a file removed, a folder removed.
  fs.mkdirSync(path.join(root, 'src', 'deep', 'er'), { recursive: true })
  fs.writeFileSync(path.join(root, 'src', 'deep', 'er', 'c.ts'), 'export function third () {}\n')
  fs.rmSync(path.join(root, 'src', 'a.ts'))
  await waitUntil(() => index.findSymbols('third', 'exact', undefined, undefined, 1).length > 0 && index.findSymbols('first', 'exact', undefined, undefined, 1).length === 0, 'the new folder\'s file in, the removed file out', 60_000, 50)
  fs.rmSync(path.join(root, 'src', 'deep'), { recursive: true })
  await waitUntil(() => index.findSymbols('third', 'exact', undefined, undefined, 1).length === 0, 'the removed folder\'s file out', 60_000, 50)
  t.match(index.status(), { files: 1 }, 'b.ts alone is left')

  // A thread that reports changes during a scan, then gives watching up.
  const dir = tempDir(t, 'wmcp-notices-')
  fs.writeFileSync(path.join(dir, 'noisy.mjs'), [
    "import { parentPort } from 'node:worker_threads'",
    'let scans = 0',
    "parentPort.on('message', (m) => {",
    "  if (m.scan === true && ++scans === 1) parentPort.postMessage({ notice: 'changed' })",
    "  if (m.scan === true && scans === 2) parentPort.postMessage({ notice: 'watch-failed', why: 'ENOSPC' })",
    '  parentPort.postMessage({ id: m.id, changed: [], gone: [], bytes: 0 })',
    '})'
  ].join('\n'))
  const warned: unknown[] = []
  const spy = pino({ level: 'warn' }, { write: (line: string) => { warned.push(JSON.parse(line)) } })
  const noisy = await built(t, {}, { workerUrl: new URL(`file://${dir}/noisy.mjs`), log: spy })
  const scans: number[] = []
  noisy.index.onScanned((changed) => { scans.push(changed) })
  t.equal(await noisy.index.ready(60_000, new AbortController().signal), true)
  await waitUntil(() => scans.length >= 2, 'the second scan')
  t.equal(scans.length, 2, 'a change seen during the first scan was scanned again after it')
  await waitUntil(() => warned.length > 0, 'the watch-failed warning')
  t.match(warned, [{ reason: 'ENOSPC', msg: /no longer watched/ }])
})

t.test('files the parser cannot read are counted and warned of, not passed by in silence; the next scan tries them again', async (t) => {
  const warned: Array<Record<string, unknown>> = []
  const spy = pino({ level: 'warn' }, { write: (line: string) => { warned.push(JSON.parse(line)) } })
  // Grammars that are not there: every parse fails, as when the parser threads cannot start (an index of no file).
  const broken = { ...where, grammars: path.join(tempDir(t, 'wmcp-no-grammars-'), 'missing') }
  const { root, index } = await built(t, { 'a.ts': 'export function a () {}\n', 'b.py': 'def b():\n    pass\n' }, { treeSitter: broken, log: spy })
  t.equal(await index.ready(60_000, new AbortController().signal), true)
  t.equal(index.status().files, 0, 'nothing was written')
  await waitUntil(() => warned.length > 0, 'the warning')
  t.match(warned, [{ skipped: 2, first: /^(a\.ts|b\.py): /, msg: /could not read or parse/ }])
  t.notMatch(String(warned[0].first), root, 'the reason names the file as the workspace shows it')
})
