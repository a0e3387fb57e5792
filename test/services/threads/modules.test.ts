import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { Worker } from 'node:worker_threads'
import { Tiktoken } from 'js-tiktoken/lite'
import cl100k from 'js-tiktoken/ranks/cl100k_base'
import { createRequire } from 'node:module'
import t, { type Test } from 'tap'
import { indexHandler, watchNotices, type IndexThreadData } from '../../../src/services/code-index/index-worker.js'
import { scanWorkspace, walkSources } from '../../../src/services/code-index/index-scan.js'
import { laneHandler } from '../../../src/services/code-index/lane-worker.js'
import { loadSqlite } from '../../../src/services/code-index/index-schema.js'
import { openIndexReader } from '../../../src/services/code-index/index-reader.js'
import { openIndexWriter } from '../../../src/services/code-index/index-writer.js'
import { publishIndex } from '../../../src/services/code-index/index-publish.js'
import { vectorThreadHandler } from '../../../src/services/code-index/vector-worker.js'
import { parserHandler } from '../../../src/services/symbols/parse-handler.js'
import { locateTreeSitter, type TreeSitterLocation } from '../../../src/services/symbols/parser.js'
import { symbolLanguageOf, type SymbolLanguage } from '../../../src/services/symbols/languages.js'
import { countHandler } from '../../../src/services/tokenizer/count-worker.js'
import { locatePdfjs, type PdfjsLocation } from '../../../src/services/workspace/pdf-text.js'
import { pdfHandler } from '../../../src/services/workspace/pdf-worker.js'
import { makePdf } from '../../helpers/documents.js'
import { tempDir } from '../../helpers/workspace-fixture.js'
import { waitUntil } from '../../helpers/wait.js'

// What each thread module runs, run here on the test's own thread: coverage counts no worker thread, and every
// line a thread runs is tested in-process through the handler its module serves (the threads themselves are
// driven by the services' own tests).

const where = locateTreeSitter() as TreeSitterLocation
const sqlite = loadSqlite() as NonNullable<ReturnType<typeof loadSqlite>>

/** Clears the flag after `ms` from another thread (this one sleeps in Atomics.wait meanwhile) and wakes its waiters. */
function clearLater (flag: Int32Array, ms: number): Worker {
  const source = "const { workerData: { flag, ms } } = require('node:worker_threads'); setTimeout(() => { Atomics.store(flag, 0, 0); Atomics.notify(flag, 0) }, ms)"
  return new Worker(source, { eval: true, workerData: { flag, ms } })
}

t.test('parser-worker: definitions with names, containers and bodies; grammars and queries kept; a parse that sleeps while the flag is up', async (t) => {
  const parse = parserHandler(where)
  const go = symbolLanguageOf('a.go') as SymbolLanguage
  const ts = symbolLanguageOf('a.ts') as SymbolLanguage
  const goText = 'package p\n\ntype T struct{}\n\nfunc (t *T) Run() int {\n\treturn 1\n}\n'

  const methods = await parse({ grammar: go.grammar, query: go.query, text: goText })
  t.match(methods.definitions, [{ kind: 'struct', name: 'T' }, { kind: 'method', name: 'Run', container: 'T', start: 4, nameRow: 4, end: 6 }])
  t.notOk('container' in methods.definitions[0], 'no container key where the grammar names none')
  t.equal(methods.hasErrors, false)
  t.same(await parse({ grammar: go.grammar, query: go.query, text: goText }), methods, 'the same grammar and query again')
  t.match(await parse({ grammar: ts.grammar, query: ts.query, text: 'class A { b () {} }\nconst broken = (\n' }), { definitions: [{ kind: 'class', name: 'A' }], hasErrors: true })
  t.same((await parse({ grammar: ts.grammar, query: '(class_declaration) @definition.class', text: 'class A {}' })).definitions, [], 'no name, no definition')
  await t.rejects(parse({ grammar: ts.grammar, query: '(no_such_node) @definition.function', text: 'x' }), /no_such_node/)

  const flag = new Int32Array(new SharedArrayBuffer(4))
  const yielding = parserHandler({ ...where, yieldFlag: flag })
  t.match(await yielding({ grammar: ts.grammar, query: ts.query, text: 'function f () {}\n' }), { definitions: [{ name: 'f' }] }, 'flag down: no wait')
  Atomics.store(flag, 0, 1)
  const helper = clearLater(flag, 30)
  t.teardown(() => helper.terminate())
  // Long enough for the parser to call back mid-parse: it sleeps there until the flag clears.
  const long = Array.from({ length: 5000 }, (_, i) => `function g${i} () { return ${i} }\n`).join('')
  t.equal((await yielding({ grammar: ts.grammar, query: ts.query, text: long })).definitions.length, 5000)
  t.equal(Atomics.load(flag, 0), 0, 'the parse went on once another thread cleared the flag')
})

t.test('count-worker: the same counts as js-tiktoken, special tokens and long runs of letters included', async (t) => {
  const require = createRequire(import.meta.url)
  const count = countHandler({ lite: require.resolve('js-tiktoken/lite'), ranks: require.resolve('js-tiktoken/ranks/cl100k_base') })
  const reference = new Tiktoken(cl100k)
  const texts = ['', 'a', 'hello world', 'const x = 1;\n\tif (x) { return }', 'naïve café — 日本語のテキスト 🎉', 'x<|endoftext|>y<|fim_prefix|>', 'a'.repeat(1600), '   \n\n  \t', 'abc'.repeat(50) + ' 12345678901234567890']
  t.same(count({ parts: texts }), { counts: texts.map(text => reference.encode(text, 'all').length) })
})

t.test('pdf-worker: text of a page range with line breaks, clamped to the document; a damaged file is refused', async (t) => {
  const extract = pdfHandler(locatePdfjs() as PdfjsLocation)
  const data = new Uint8Array(makePdf(['first heading\nfirst body', 'second heading', 'third']))
  t.same(await extract({ data: data.slice(), first: 1, last: 1 }), { pages: 3, texts: ['first heading\nfirst body'] })
  t.same(await extract({ data: data.slice(), first: 2, last: 9 }), { pages: 3, texts: ['second heading', 'third'] }, 'the range ends with the document')
  await t.rejects(extract({ data: new TextEncoder().encode('%PDF-1.4\nnot a PDF\n'), first: 1, last: 1 }), /PDF/)
})

t.test('lane-worker: its share of the roots, as a walk here finds it', async (t) => {
  const root = tempDir(t, 'wmcp-lane-')
  for (const dir of ['a/x', 'b/y', 'c/z']) fs.mkdirSync(path.join(root, dir), { recursive: true })
  for (const file of ['a/x/one.ts', 'b/y/two.py', 'c/z/three.go']) fs.writeFileSync(path.join(root, file), 'x\n')
  const roots = [{ name: 'r', path: root }]
  const here = await walkSources(await scanWorkspace(roots), { lane: 1, lanes: 2 })
  const { found } = await laneHandler({ roots })({ lane: 1, lanes: 2 })
  t.same(found.files.map(f => f.relative).sort(), here.files.map(f => f.relative).sort())
  t.same(found.folders.sort(), here.folders.sort())
})

t.test('vector-worker: the store of vectors when SQLite is installed, a clear refusal when it is not', async (t) => {
  const file = path.join(tempDir(t, 'wmcp-vectors-'), 'index.sqlite')
  openIndexWriter(sqlite, file).close()
  const handle = vectorThreadHandler({ vectorFile: file }, undefined, sqlite)
  t.same(handle({ configure: { model: 'm', dims: 2 } }), { vectors: 0 })
  t.same(handle({ search: { vector: Float32Array.from([1, 0]), k: 3 } }), { vectors: 0, near: { hits: [], mean: 0, sd: 0 } })
  t.same(await handle({ close: true }), { vectors: 0 }, 'close: the store closed before the thread is ended')
  t.throws(() => handle({ refresh: true }), 'closed: no more reads')
  const missing = vectorThreadHandler({ vectorFile: file }, undefined, null)
  t.throws(() => missing({ refresh: true }), /@photostructure\/sqlite is not installed/)
})

/** An index handler over a fresh tree, and the notices it sent. */
function indexer (t: Test, files: Record<string, string>, options: Partial<IndexThreadData> = {}, store: typeof sqlite | null = sqlite, onNotice?: (notice: Record<string, unknown>) => void) {
  const root = tempDir(t, 'wmcp-index-root-')
  for (const [name, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, name)), { recursive: true })
    fs.writeFileSync(path.join(root, name), text)
  }
  const indexFile = path.join(tempDir(t, 'wmcp-index-state-'), 'index.sqlite')
  const notices: Array<Record<string, unknown>> = []
  const data: IndexThreadData = { indexFile, roots: [{ name: 'r', path: root }], treeSitter: where, threads: 1, watch: false, lease: true, ...options }
  const handle = indexHandler(data, (notice) => { notices.push(notice); onNotice?.(notice) }, store)
  return { root, indexFile, notices, handle }
}

t.test('index-worker with watch: after a whole walk, a change is rescanned in its folder alone', async (t) => {
  const { root, handle, notices } = indexer(t, { 'a.ts': 'export const a = 1\n', 'sub/b.ts': 'export const b = 1\n' }, { watch: true })
  t.teardown(async () => { await handle({ close: true }) })
  t.match(await handle({ scan: true }), { changed: 2, gone: 0 })
  fs.writeFileSync(path.join(root, 'sub', 'c.ts'), 'export const c = 1\n')
  fs.rmSync(path.join(root, 'a.ts'))
  await waitUntil(() => notices.some(n => n.notice === 'changed'), 'the watch to see the changes', 30_000, 20)
  // A change reported after the scan began is scanned by the next one; both folders may come in two reports.
  let changed = 0
  let gone = 0
  for (let scans = 0; scans < 5 && (changed < 1 || gone < 1); scans++) {
    const answer = await handle({ scan: true }) as { changed: number, gone: number }
    changed += answer.changed
    gone += answer.gone
  }
  t.same([changed, gone], [1, 1], 'the new file and the removed one, nothing else parsed again')
})

t.test('index-worker: files the parser cannot read are counted with the first reason; close also ends the watch', async (t) => {
  // Grammars that are not there: every parse fails, as when the parser threads cannot start.
  const broken = { ...where, grammars: path.join(tempDir(t, 'wmcp-no-grammars-'), 'missing') }
  const { handle } = indexer(t, { 'a.ts': 'export const a = 1\n', 'b.py': 'b = 1\n' }, { treeSitter: broken, watch: true })
  const answer = await handle({ scan: true }) as { changed: number, skipped: number, skippedWhy: string }
  t.match(answer, { changed: 2, skipped: 2, skippedWhy: /^(a\.ts|b\.py): .*PARSE_FAILED|^(a\.ts|b\.py): / })
  t.same(await handle({ close: true }), {}, 'the writer, the lease and the folder watch let go')
})

t.test('index-worker: a scan walks, parses and writes what changed, reporting progress; a second finds nothing new', async (t) => {
  const flag = new Int32Array(new SharedArrayBuffer(4))
  // A call a client waits on is running: the first file waits until it ends — here, a moment after the scan's first
  // progress notice, which comes just before the first file (the flag cleared on a timer set before the scan raced a
  // slow walk, and the wait went unseen).
  let calls = true
  const { root, indexFile, notices, handle } = indexer(t, { 'src/a.ts': 'export function a () {}\n', 'src/b.py': 'def b():\n    pass\n', 'c.go': 'package c\n' }, { yieldFlag: flag }, sqlite, () => {
    if (calls) setTimeout(() => Atomics.store(flag, 0, 0), 30)
    calls = false
  })
  Atomics.store(flag, 0, 1)
  const first = await handle({ scan: true })
  t.match(first, { changed: 3, gone: 0, bytes: fs.statSync(path.join(root, 'src/a.ts')).size + fs.statSync(path.join(root, 'src/b.py')).size + 10 })
  t.match(notices[0], { notice: 'progress', done: 0, pending: 3 })
  t.match(notices.at(-1), { notice: 'progress', done: 3, pending: 3 })
  const reader = openIndexReader(sqlite, indexFile)
  t.teardown(() => reader?.close())
  t.match(reader?.state(), { complete: true, counts: { files: 3 } })
  t.notOk(fs.existsSync(`${indexFile}.lock`), 'the lease was let go after the scan')

  fs.rmSync(path.join(root, 'c.go'))
  t.match(await handle({ scan: true }), { changed: 0, gone: 1 })
  t.same(await handle({ release: true }), {}, 'a release with no lease held')
  t.same(await handle({ close: true }), {}, 'close: the writer and the lease let go before the thread is ended')
  t.notOk(fs.existsSync(`${indexFile}.lock`))
  fs.writeFileSync(path.join(root, 'd.go'), 'package d\n')
  t.match(await handle({ scan: true }), { changed: 1, gone: 0 }, 'a scan after close opens the writer again')
})

t.test('index-worker: a lease held elsewhere, an abort mid-scan, a store problem, no SQLite, another file published in place', async (t) => {
  const busy = indexer(t, { 'a.ts': 'export const a = 1\n' })
  fs.writeFileSync(`${busy.indexFile}.lock`, JSON.stringify({ pid: 1, host: os.hostname(), since: 5 }))
  t.same(await busy.handle({ scan: true }), { busy: { pid: 1, host: os.hostname(), since: 5 } }, 'nothing walked')
  t.same(await indexer(t, { 'a.ts': 'export const a = 1\n' }, { lease: false }).handle({ scan: true }), { changed: 1, gone: 0, bytes: 19, skipped: 0 }, 'no lease asked for: the caller holds it')

  const many = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`f${i}.py`, Array.from({ length: 400 }, (_, j) => `def f${i}_${j}():\n    pass\n`).join('')]))
  const aborting = indexer(t, many)
  const scan = aborting.handle({ scan: true })
  t.same(await aborting.handle({ abort: true }), {}, 'an abort is answered at once, beside the scan')
  await t.rejects(scan, { name: 'AbortError' })
  t.same(await aborting.handle({ abort: true }), {}, 'an abort with nothing running')

  // 40 files of 400 definitions each: more than the smallest limit of the index file (64 pages).
  const full = indexer(t, many, { maxBytes: 8192 })
  const error = await full.handle({ scan: true }).catch((err: unknown) => err)
  t.match(error, { details: { problem: 'disk-full' }, cause: { message: /full/ } }, 'a full index file is a store problem, said as such, with the store\'s own error as its cause')
  await t.rejects(indexer(t, {}, {}, null).handle({ scan: true }), { message: '@photostructure/sqlite is not installed' })

  const replaced = indexer(t, { 'a.ts': 'export const a = 1\n' })
  await replaced.handle({ scan: true })
  // What the index command publishes: a file without a write-ahead log beside it.
  const other = indexer(t, { 'b.ts': 'export const b = 1\n' }, { lease: false, journal: 'delete' })
  await other.handle({ scan: true })
  publishIndex(other.indexFile, replaced.indexFile)
  t.match(await replaced.handle({ scan: true }), { changed: 1, gone: 1 }, 'the published file is written from then on: it held b.ts, not a.ts')
})

t.test('index-worker: with watch, a change in a scanned folder is a notice; a folder that cannot be watched another', async (t) => {
  const { root, notices, handle } = indexer(t, { 'src/a.ts': 'export const a = 1\n' }, { watch: true })
  await handle({ scan: true })
  fs.writeFileSync(path.join(root, 'src', 'b.ts'), 'export const b = 2\n')
  await waitUntil(() => notices.some(n => n.notice === 'changed'), 'the watcher\'s notice')
  t.ok(notices.some(n => n.notice === 'changed'))
  const sent: Array<Record<string, unknown>> = []
  watchNotices((notice) => sent.push(notice)).onFail('ENOSPC')
  t.same(sent, [{ notice: 'watch-failed', why: 'ENOSPC' }])
})
