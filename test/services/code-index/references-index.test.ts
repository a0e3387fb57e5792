import fs from 'node:fs'
import path from 'node:path'
import pino from 'pino'
import t, { type Test } from 'tap'
import { createCodeIndex, type CodeIndex } from '../../../src/services/code-index/code-index.js'
import { followIndexFile } from '../../../src/services/code-index/index-reader.js'
import { indexHandler, OPTIMIZE_AFTER } from '../../../src/services/code-index/index-worker.js'
import { loadSqlite } from '../../../src/services/code-index/index-schema.js'
import { locateTreeSitter, type TreeSitterLocation } from '../../../src/services/symbols/parser.js'
import { nameToken } from '../../../src/services/symbols/references.js'
import { createWorkspace } from '../../../src/services/workspace/workspace.js'
import { tempDir } from '../../helpers/workspace-fixture.js'

const log = pino({ level: 'silent' })
const sqlite = loadSqlite() as NonNullable<ReturnType<typeof loadSqlite>>
const where = locateTreeSitter() as TreeSitterLocation
const FIXTURES = new URL('../../fixtures/references/', import.meta.url)

interface Built { root: string, index: CodeIndex, file: string }

async function built (t: Test, extra: Record<string, string> = {}): Promise<Built> {
  const root = tempDir(t, 'wmcp-refs-')
  for (const name of fs.readdirSync(FIXTURES)) fs.copyFileSync(new URL(name, FIXTURES), path.join(root, name))
  for (const [name, text] of Object.entries(extra)) {
    fs.mkdirSync(path.dirname(path.join(root, name)), { recursive: true })
    fs.writeFileSync(path.join(root, name), text)
  }
  const workspace = await createWorkspace({ root, log })
  const file = path.join(tempDir(t, 'wmcp-refs-state-'), 'index.sqlite')
  const index = createCodeIndex({ workspace, treeSitter: where, log, sqlite, file, staleMs: 0 })
  t.teardown(() => index.close())
  t.equal(await index.ready(120_000, new AbortController().signal), true)
  return { root, index, file }
}

const counts = (index: CodeIndex, name: string, scope?: string): string[] =>
  index.references.counts(nameToken(name) as string, scope).map(r => `${path.basename(r.path)} ${r.kind} ${r.count}`).sort()

t.test('the index keeps every language\'s references: by name, per file and kind, with their sites', async (t) => {
  const { root, index } = await built(t, { 'quiet.c': 'int quiet_value;\nint twice(void) { return quiet_value + quiet_value; }\n' })
  // One name per grammar the index parses, as its fixture uses it.
  t.same(counts(index, 'createUploader'), ['app.js call 2', 'app.js import 1', 'panel.tsx call 1'], 'JavaScript and TSX')
  t.same(counts(index, 'Policy'), ['panel.tsx import 1', 'panel.tsx type 2', 'upload.ts import 1', 'upload.ts type 2'], 'TypeScript')
  t.same(counts(index, 'helper'), ['tasks.py call 1'], 'Python: not in a comment or a string')
  t.same(counts(index, 'lookup'), ['server.go call 1'], 'Go: the definition itself left out')
  t.same(counts(index, 'open_store'), ['cache.rs call 1', 'cache.rs import 1'], 'Rust')
  t.same(counts(index, 'Ledger'), ['Billing.java call 1', 'Billing.java import 1', 'Billing.java type 1'], 'Java')
  t.same(counts(index, 'kmalloc'), ['slab.c call 1', 'slab.c declaration 1'], 'C: not in a comment or a string')
  t.same(counts(index, 'measure'), ['widget.cpp call 1'], 'C++')
  t.same(counts(index, 'Uploader', path.join(root, 'upload.ts')), ['upload.ts call 1', 'upload.ts type 1'], 'a file scope')
  t.same(counts(index, 'nothing_uses_this'), [])
  const slab = index.references.counts('kmalloc', undefined)[0].file
  t.same(index.references.sites('kmalloc', [slab]), [{ file: slab, kind: 'declaration', line: 12, column: 7 }, { file: slab, kind: 'call', line: 18, column: 14 }])
  t.same(index.references.sites('kmalloc', []), [])
  t.same(index.references.calls(slab, 16, 26).map(c => `${c.line} ${c.name}`), ['18 kmalloc', '22 alloc_one', '24 kfree', '25 ctor'], 'the calls a function makes')
  const go = index.references.counts('lookup', undefined)[0].file
  t.same(index.references.calls(go, 1, 1), [], 'no call on those lines')
  t.same([...index.references.imports([slab]).values()], [['linux/slab.h', 'internal.h']])
  const quiet = index.references.counts('quiet_value', undefined)[0].file
  t.same(index.references.sites('quiet_value', [quiet]).map(s => `${s.line}:${s.column}`), ['1:5', '2:26', '2:40'], 'in line and column order')
  t.same(index.references.calls(quiet, 1, 10), [], 'a file that calls nothing')
  t.same(index.references.calls(999_999, 1, 10), [], 'a file the index does not hold')
  t.same([...index.references.imports([quiet]).values()], [[]], 'a file that imports nothing')
  t.same(index.references.imports([]), new Map())
  t.match(index.references.outlines([slab]).get(slab), [{ name: 'KMALLOC_FLAGS', kind: 'macro' }, { name: 'alloc_one' }, { name: 'cache_entry', kind: 'struct' }, { name: 'cache_alloc', kind: 'function', line: 16, endLine: 26 }])
  t.same(index.references.outlines([]), new Map())
  t.same([...index.references.fileIds([path.join(root, 'slab.c'), path.join(root, 'missing.c')])], [[path.join(root, 'slab.c'), slab]])
  t.same(index.references.fileIds([]), new Map())
})

t.test('references follow the files: a change replaces a file\'s, a deletion drops them, a file with no uses keeps none', async (t) => {
  const { root, index } = await built(t, { 'empty.c': '/* nothing */\n' })
  const scanned = (): Promise<void> => new Promise(resolve => index.onScanned(() => resolve()))
  const upload = path.join(root, 'upload.ts')
  fs.writeFileSync(upload, 'export function later (): void { createUploader() }\n')
  fs.utimesSync(upload, new Date(), new Date(Date.now() + 5000))
  fs.rmSync(path.join(root, 'app.js'))
  fs.rmSync(path.join(root, 'empty.c'))
  const next = scanned()
  await index.ready(1000, new AbortController().signal)
  await next
  t.same(counts(index, 'createUploader'), ['panel.tsx call 1', 'upload.ts call 1'], 'app.js forgotten, upload.ts written anew')
  t.same(counts(index, 'Policy'), ['panel.tsx import 1', 'panel.tsx type 2'], 'upload.ts\'s old references are gone')
})

t.test('a reader with no index file yet answers every reference question with nothing', async (t) => {
  const reader = followIndexFile(sqlite, path.join(tempDir(t, 'wmcp-refs-none-'), 'index.sqlite'), false)
  t.same(reader.references.counts('a', undefined), [])
  t.same(reader.references.sites('a', [1]), [])
  t.same(reader.references.calls(1, 1, 2), [])
  t.same(reader.references.imports([1]), new Map())
  t.same(reader.references.outlines([1]), new Map())
  t.same(reader.references.fileIds(['/a']), new Map())
  t.same(reader.map.files(undefined), [])
  t.same(reader.map.definitions([1], ['function']), [])
  t.same(reader.map.uses(['a']), [])
  t.same(reader.map.definers(['a']), new Map())
  t.same(reader.map.paths([1]), new Map())
})

t.test('a scan that wrote many files merges the references\' full-text segments into one; a smaller one leaves them', async (t) => {
  const root = tempDir(t, 'wmcp-refs-merge-')
  fs.writeFileSync(path.join(root, 'a.c'), 'void a(void) { b(); }\n')
  const segments = async (optimizeAfter: number): Promise<number> => {
    const indexFile = path.join(tempDir(t, 'wmcp-refs-merge-state-'), 'index.sqlite')
    const handle = indexHandler({ indexFile, roots: [{ name: 'r', path: root }], treeSitter: where, threads: 1, watch: false, lease: true, optimizeAfter }, () => {}, sqlite)
    await handle({ scan: true })
    // A second scan writes a second file: a second segment, unless the scan merges them.
    fs.writeFileSync(path.join(root, `z${optimizeAfter}.c`), 'void z(void) { b(); }\n')
    await handle({ scan: true })
    await handle({ release: true })
    const db = new sqlite.DatabaseSync(indexFile, { readOnly: true })
    try {
      t.same((db.prepare("SELECT count(*) AS n FROM refs_vocab WHERE term = 'b'").get() as { n: number }).n, optimizeAfter === 1 ? 2 : 3, 'the references are all there')
      return (db.prepare('SELECT count(DISTINCT segid) AS n FROM refs_fts_idx').get() as { n: number }).n
    } finally {
      db.close()
    }
  }
  t.ok(OPTIMIZE_AFTER >= 100, 'only a big scan pays for the merge')
  t.equal(await segments(1), 1)
  t.ok(await segments(1000) > 1)
})
