import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import pino from 'pino'
import t, { type Test } from 'tap'
import { Value } from '@sinclair/typebox/value'
import { createCodeIndex, type CodeIndex, type CodeIndexStatus } from '../../src/services/code-index/code-index.js'
import { loadSqlite } from '../../src/services/code-index/index-schema.js'
import { locateTreeSitter, type TreeSitterLocation } from '../../src/services/symbols/parser.js'
import { createTokenizer } from '../../src/services/tokenizer/tokenizer.js'
import { createWorkspace, type WorkspaceService } from '../../src/services/workspace/workspace.js'
import { createWorkspaceSet } from '../../src/services/workspace/set.js'
import { createLimiter } from '../../src/services/limiter.js'
import type { ToolResult } from '../../src/tool-api/define-tool.js'
import { findSymbol, FindSymbolOutput } from '../../src/tools/find-symbol.js'
import { getWorkspaceInfo } from '../../src/tools/get-workspace-info.js'
import { searchCode, SearchCodeOutput } from '../../src/tools/search-code.js'
import { textOf, toolContext } from '../helpers/workspace-fixture.js'
import { INDEX_TASK, INDEX_WAIT_MS, indexNotes } from '../../src/tool-kit/code-index-common.js'

const log = pino({ level: 'silent' })
const tokenizer = createTokenizer({ workers: 0 })
const sqlite = loadSqlite() as NonNullable<ReturnType<typeof loadSqlite>>
const where = locateTreeSitter() as TreeSitterLocation

const FILES: Record<string, string> = {
  'src/upload.ts': [
    'export class Uploader {',
    '  async retryFailedUpload (path: string): Promise<number> {',
    '    // retry each failed upload with backoff',
    '    return 3',
    '  }',
    '}',
    '',
    'export function createUploader (): Uploader {',
    '  return new Uploader()',
    '}',
    ''
  ].join('\n'),
  'src/config.py': 'def parse_config(path):\n    return {}\n\n\ndef load():\n    return parse_config("x")\n',
  'test/upload.test.ts': 'export function createUploader () { return null }\n',
  'scripts/deploy.py': 'import os\n\nprint("deploy the rollout")\nos.system("rollout")\n',
  'lib/slab.h': 'static __always_inline __alloc_size(1) void *kmalloc(size_t size, gfp_t flags)\n{\n\treturn 0;\n}\n#define kmalloc_track kmalloc\n',
  'tools/kernel.h': 'static inline void *kmalloc(int size, int flags)\n{\n\treturn 0;\n}\n',
  // Functions long enough (12+ lines) to be chunks of their own.
  'src/many.go': `package main\n\n${Array.from({ length: 40 }, (_, i) => `func Handler${i}() {\n${'\tpanic("handler")\n'.repeat(11)}}\n`).join('\n')}`
}

interface Fixture { root: string, workspace: WorkspaceService, index: CodeIndex }

async function fixture (t: Test, files: Record<string, string> = FILES): Promise<Fixture> {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'wmcp-index-tools-')))
  const state = fs.mkdtempSync(path.join(os.tmpdir(), 'wmcp-index-state-'))
  t.teardown(() => {
    fs.rmSync(root, { recursive: true, force: true })
    fs.rmSync(state, { recursive: true, force: true })
  })
  for (const [name, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, name)), { recursive: true })
    fs.writeFileSync(path.join(root, name), text)
  }
  const workspace = await createWorkspace({ root, log })
  const file = path.join(state, 'index.sqlite')
  const index = createCodeIndex({ workspace, treeSitter: where, log, sqlite, file })
  t.teardown(() => index.close())
  await index.ready(60_000, new AbortController().signal)
  return { root, workspace, index }
}

const find = async (f: Pick<Fixture, 'workspace' | 'index'>, args: Record<string, unknown>): Promise<ToolResult> =>
  await findSymbol.run({ workspace: f.workspace, codeIndex: f.index, tokenizer, ...args } as never, toolContext())
const search = async (f: Pick<Fixture, 'workspace' | 'index'>, args: Record<string, unknown>): Promise<ToolResult> =>
  await searchCode.run({ workspace: f.workspace, codeIndex: f.index, tokenizer, ...args } as never, toolContext())
const data = (r: ToolResult): Record<string, any> => r.structuredContent as Record<string, any>

t.test('find_symbol: the definition first — real code before tests and tools, a function before a macro', async (t) => {
  const f = await fixture(t)
  const kmalloc = await find(f, { name: 'kmalloc' })
  t.same(data(kmalloc).definitions.map((d: { path: string }) => d.path), ['lib/slab.h', 'tools/kernel.h'])
  t.match(textOf(kmalloc), /^# Definitions of "kmalloc" — 2 matches\nlib\/slab\.h:1-4 function kmalloc: static __always_inline __alloc_size\(1\) void \*kmalloc\(size_t size, gfp_t flags\)\ntools\/kernel\.h:1-4 function kmalloc: /)
  t.ok(Value.Check(FindSymbolOutput, data(kmalloc)))
  t.same(data(await find(f, { name: 'createUploader' })).definitions.map((d: { path: string }) => d.path), ['src/upload.ts', 'test/upload.test.ts'])
  t.same(data(await find(f, { name: 'kmalloc', match: 'prefix' })).definitions.map((d: { name: string }) => d.name), ['kmalloc', 'kmalloc', 'kmalloc_track'])
  t.same(data(await find(f, { name: 'CONFIG', match: 'substring' })).definitions.map((d: { name: string }) => d.name), ['parse_config'])
  t.same(data(await find(f, { name: 'kmalloc', kind: 'macro', match: 'prefix' })).definitions.map((d: { name: string }) => d.name), ['kmalloc_track'])
  t.same(data(await find(f, { name: 'kmalloc', path: 'tools' })).definitions.map((d: { path: string }) => d.path), ['tools/kernel.h'])
  t.same(data(await find(f, { name: 'Uploader.retryFailedUpload' })).definitions, [{ path: 'src/upload.ts', kind: 'method', name: 'retryFailedUpload', container: 'Uploader', line: 2, end_line: 5, signature: 'async retryFailedUpload (path: string): Promise<number>' }])
  t.same(data(await find(f, { name: 'Other::retryFailedUpload' })).definitions, [], 'another owner')
})

t.test('find_symbol: bodies within the budget, nothing found, bad names, paths outside', async (t) => {
  const f = await fixture(t)
  const body = textOf(await find(f, { name: 'parse_config', include_body: true }))
  t.match(body, /\n## src\/config\.py:1-2 function parse_config: def parse_config\(path\):\n1\tdef parse_config\(path\):\n2\t {4}return \{\}\n/)
  const many = await find(f, { name: 'Handler', match: 'prefix', include_body: true, page_size: 40, max_response_tokens: 1000 })
  const p = data(many).pagination
  t.ok(p.returned >= 1 && p.returned < 40, `${p.returned} bodies fit 1000 tokens`)
  t.ok(await tokenizer.countExact(textOf(many)) <= 1000)
  t.match(textOf(many), new RegExp(`\\nNote: page cut to ${p.returned} definitions to fit max_response_tokens=1000; the next call continues\\nDefinitions 1–${p.returned} of 40 \\| next: find_symbol name="Handler" match="prefix" include_body=true page_size=40 max_response_tokens=1000 offset=${p.returned}$`))
  t.match(textOf(await find(f, { name: 'nothingHere', match: 'prefix' })), /Try match="substring", or search_regex/)
  t.same(data(await find(f, { name: 'kmalloc', path: 'lib/..' })).definitions.length, 2, 'a path that is the root is everywhere')
  const none = textOf(await find(f, { name: 'nothingHere' }))
  t.match(none, /No definitions of "nothingHere" in \d+ indexed symbols\. Try match="prefix", or search_regex pattern="nothingHere" finds it as text\./)
  t.match(textOf(await find(f, { name: 'zz"\\', match: 'substring' })), /No definitions of substring "zz"\\" in \d+ indexed symbols\. search_regex pattern="zz\\"\\\\" finds it as text\./)
  await t.rejects(find(f, { name: '   ' }), { message: /^ERROR INVALID_ARGUMENT: name: " {3}" names no symbol/ })
  await t.rejects(find(f, { name: 'kmalloc', path: '../outside' }), { message: /^ERROR PATH_OUTSIDE_ROOT/ })
  // A file changed since it was indexed: its body says so instead of showing other lines.
  fs.rmSync(path.join(f.root, 'src/config.py'))
  t.match(textOf(await find(f, { name: 'parse_config', include_body: true })), /\(the file changed since it was indexed; read_files reads it now\)/)
  // A body longer than 200 lines ends with the call that reads the rest.
  const long = await fixture(t, {
    'big.py': `def big():\n${'    x = 1\n'.repeat(250)}`,
    'wide.py': [1, 2].map(n => `def wide${n}():\n${`    x = "${'w '.repeat(140)}"\n`.repeat(30)}`).join('\n'),
    'consts.ts': Array.from({ length: 5001 }, (_, i) => `export const k${i} = ${i}`).join('\n')
  })
  // One body bigger than the whole budget still goes out alone: every call moves forward.
  t.equal(data(await find(long, { name: 'wide', match: 'prefix', include_body: true, max_response_tokens: 1000 })).pagination.returned, 1)
  t.match(textOf(await find(long, { name: 'k', match: 'prefix', page_size: 1 })), /^# Definitions of prefix "k" — 5000\+ matches\n/)
  t.match(textOf(await find(long, { name: 'big', include_body: true, max_response_tokens: 20000 })), /\n… 51 more lines \(read_files files=\[\{"path":"big\.py","start_line":201,"end_line":251\}\]\)\n/)
})

t.test('search_code: "retry upload" ranks retryFailedUpload first, with the lines that matched', async (t) => {
  const f = await fixture(t)
  const result = await search(f, { query: 'retry upload' })
  t.ok(Value.Check(SearchCodeOutput, data(result)))
  t.same(data(result).terms, ['retry', 'upload'])
  t.match(data(result).results[0], { path: 'src/upload.ts', start_line: 1, kind: 'class', symbol: 'Uploader' })
  t.match(textOf(result), /^# Code matching "retry" "upload", best first — chunks holding more of the words, in files that match more, rank higher\n## src\/upload\.ts:1-\d+ class Uploader\n1\texport class Uploader \{\n2\t {2}async retryFailedUpload \(path: string\): Promise<number> \{\n3\t {4}\/\/ retry each failed upload with backoff\n/)
  t.match(textOf(result), /\nRead one whole: read_files files=\[\{"path":"src\/upload\.ts","start_line":1,"end_line":\d+\}\]\nChunks 1–\d+ of \d+ \| next: none$/)
  t.same(data(await search(f, { query: 'backoff', path: 'test' })).results, [], 'path narrows')
  const script = await search(f, { query: 'rollout' })
  t.same(data(script).results.map((r: Record<string, unknown>) => ({ ...r, score: typeof r.score })), [{ path: 'scripts/deploy.py', start_line: 1, end_line: 4, kind: 'code', score: 'number' }], 'code between definitions has no symbol')
  t.match(textOf(script), /\n## scripts\/deploy\.py:1-4 code\n3\tprint\("deploy the rollout"\)\n4\tos\.system\("rollout"\)\n/)
  t.match(textOf(await search(f, { query: 'nowhere_to_be_found' })), /^# Code matching "nowhere_to_be_found" "nowhere" "found", best first — chunks holding more of the words, in files that match more, rank higher\nNo indexed code has these words\. search_regex pattern="nowhere_to_be_found\|nowhere\|found" ignore_case=true searches every file as text\.\nChunks 0 of 0 \| next: none$/)
  await t.rejects(search(f, { query: '+ - ! ?' }), { message: /^ERROR INVALID_ARGUMENT: query: "\+ - ! \?" holds no word to search for/ })
  const long = textOf(await search(f, { query: Array.from({ length: 20 }, (_, i) => String.fromCharCode(97 + i).repeat(2)).join(' ') }))
  t.match(long, /\nNote: the query has 20 words; the first 16 were searched\n/)
  const paged = await search(f, { query: 'handler panic', page_size: 2 })
  t.match(textOf(paged), /\| next: search_code query="handler panic" page_size=2 offset=2$/)
  const cut = await search(f, { query: 'handler panic', page_size: 50, max_response_tokens: 1000 })
  t.ok(await tokenizer.countExact(textOf(cut)) <= 1000)
  t.match(textOf(cut), /\nNote: page cut to \d+ chunks to fit max_response_tokens=1000; the next call continues\n/)
  // A snippet of a chunk without the words (they are in its path) shows its first lines.
  t.match(textOf(await search(f, { query: 'slab' })), /\n## lib\/slab\.h:1-5 function kmalloc\n1\tstatic __always_inline/)
  fs.rmSync(path.join(f.root, 'src/upload.ts'))
  t.match(textOf(await search(f, { query: 'retry upload' })), /\n## src\/upload\.ts:1-\d+ class Uploader\n\(the file changed since it was indexed; read_files reads it now\)\n/)
})

t.test('what an unavailable index says, for each way its store can fail: the state folder by its flag (never its path), the space, the flag to change', async (t) => {
  const { problemText } = await import('../../src/services/code-index/index.js')
  const { problemHint } = await import('../../src/tool-kit/code-index-common.js')
  const base = { stateDir: '/srv/state', file: '/srv/state/index-1.sqlite', detail: 'why' }

  t.equal(problemText({ ...base, kind: 'disk-full' }), 'the code index cannot be written: the disk of the state folder (--state-dir) is full')
  t.equal(problemText({ ...base, kind: 'size-limit', freeBytes: 1024 }), 'the code index reached its size limit, --index-max-mb (1.0 KB free)')
  t.equal(problemText({ ...base, kind: 'read-only' }), 'the code index cannot be written: the state folder (--state-dir) is read-only or not writable by this server (why)')
  t.equal(problemText({ ...base, kind: 'io-error' }), 'the code index cannot be written: the disk of the state folder (--state-dir) failed with an I/O error (why)')
  t.equal(problemText({ ...base, kind: 'cannot-open' }), 'the code index file in the state folder (--state-dir) cannot be opened (why)')
  t.equal(problemText({ ...base, kind: 'missing' }), 'no shared code index has been published in the state folder (--state-dir) for these roots')
  // The store's own words name paths: the index file and the folder by name, any other server path hidden.
  t.equal(problemText({ ...base, kind: 'read-only', detail: "EACCES: permission denied, open '/srv/state/index-1.sqlite-wal'" }),
    "the code index cannot be written: the state folder (--state-dir) is read-only or not writable by this server (EACCES: permission denied, open 'the index file-wal')")
  t.equal(problemText({ ...base, kind: 'cannot-open', detail: 'unable to open /tmp/etilqs_1 or /srv/state in http://x/y, disk I/O error' }),
    'the code index file in the state folder (--state-dir) cannot be opened (unable to open (a server path) or the state folder (--state-dir) in http://x/y, disk I/O error)')
  t.equal(problemHint({ ...base, kind: 'missing' }), 'search_regex searches the files themselves; the operator publishes one with `workspace-mcp index` (same roots and --state-dir); this server picks it up within seconds')
  t.equal(problemHint({ ...base, kind: 'size-limit' }), 'search_regex searches the files themselves; the operator can raise --index-max-mb (WORKSPACE_MCP_INDEX_MAX_MB) or point --state-dir (WORKSPACE_MCP_STATE_DIR) elsewhere')
  t.equal(problemHint({ ...base, kind: 'read-only', retryAt: Date.UTC(2026, 0, 1, 12, 30, 5) }), 'search_regex searches the files themselves; the operator can point --state-dir (WORKSPACE_MCP_STATE_DIR) at a writable volume with room; the server tries again at 12:30:05 UTC')
})

function fakeIndex (status: Partial<CodeIndexStatus>): CodeIndex {
  return {
    status: () => ({ state: 'building', scanning: true, failures: 0, pending: 100, done: 40, files: 40, chunks: 80, symbols: 120, ...status }),
    start: () => {},
    ready: async (_wait, _signal, progress) => { progress?.(40, 100); return false },
    findSymbols: () => [],
    searchChunks: () => [],
    chunksById: () => [],
    references: { counts: () => [], sites: () => [], calls: () => [], imports: () => new Map(), outlines: () => new Map(), fileIds: () => new Map() },
    map: { files: () => [], definitions: () => [], uses: () => [], definers: () => new Map(), paths: () => new Map() },
    onScanned: () => {},
    file: () => undefined,
    close: async () => {}
  }
}

t.test('a call before the index is ready says what it covers; a failed index says why; progress is reported', async (t) => {
  const f = await fixture(t, { 'a.ts': 'export function a () {}\n' })
  const progress: unknown[] = []
  const ctx = { ...toolContext(), progress: async (...args: unknown[]) => { progress.push(args) } }
  const building = await findSymbol.run({ workspace: f.workspace, codeIndex: fakeIndex({}), tokenizer, name: 'a' } as never, ctx)
  t.match(textOf(building), /\nNote: the code index is still being built \(40 of 100 changed files done, 40 files indexed\); these results cover the files indexed so far — call again shortly for the rest, or use search_regex now\.\n/)
  t.same(progress, [[40, 100, 'indexing the workspace']])
  const failed = textOf(await search({ workspace: f.workspace, index: fakeIndex({ state: 'failed', error: 'disk full' }) }, { query: 'ab' }))
  t.match(failed, /\nNote: the code index could not be built \(disk full\); these results cover 40 files indexed before\. search_regex searches the files themselves\.\n/)
  t.match(textOf(await search({ workspace: f.workspace, index: fakeIndex({ state: 'failed' }) }, { query: 'cd' })), /could not be built \(unknown error\)/)
  const rejecting = { ...ctx, progress: async () => { throw new Error('client gone') } }
  t.match(textOf(await findSymbol.run({ workspace: f.workspace, codeIndex: fakeIndex({}), tokenizer, name: 'a' } as never, rejecting)), /still being built/, 'a progress notice that fails is not the call\'s failure')
})

t.test('several roots show prefixed paths; a session narrowed to one root sees only its results', async (t) => {
  const one = await fixture(t, { 'src/a.ts': 'export function shared () {}\n' })
  const two = await fixture(t, { 'src/b.ts': 'export function shared () {}\n' })
  const [app, lib] = await Promise.all([
    createWorkspace({ root: one.root, name: 'app', prefixed: true, log }),
    createWorkspace({ root: two.root, name: 'lib', prefixed: true, log })
  ])
  const set = createWorkspaceSet([app, lib], createLimiter())
  const state = fs.mkdtempSync(path.join(os.tmpdir(), 'wmcp-index-state-'))
  t.teardown(() => fs.rmSync(state, { recursive: true, force: true }))
  const file = path.join(state, 'index.sqlite')
  const index = createCodeIndex({ workspace: set, treeSitter: where, log, sqlite, file })
  t.teardown(() => index.close())
  // The first scan is waited for here, not by the call's 3 s wait: a loaded machine may take longer.
  await index.ready(60_000, new AbortController().signal)
  t.same(data(await find({ workspace: set, index }, { name: 'shared' })).definitions.map((d: { path: string }) => d.path), ['app:src/a.ts', 'lib:src/b.ts'])
  t.same(data(await find({ workspace: set, index }, { name: 'shared', path: 'lib:' })).definitions.map((d: { path: string }) => d.path), ['lib:src/b.ts'])
  t.same(data(await find({ workspace: set, index }, { name: 'shared', path: '.' })).definitions.length, 2)
  // The session's client roots kept only app (a plain, single-root workspace): lib's definition is not shown.
  const narrowed = await createWorkspace({ root: one.root, log })
  t.same(data(await find({ workspace: narrowed, index }, { name: 'shared' })).definitions.map((d: { path: string }) => d.path), ['src/a.ts'])
  const code = await search({ workspace: narrowed, index }, { query: 'shared' })
  t.same(data(code).results.map((r: { path: string }) => r.path), ['src/a.ts'])
  t.equal(data(code).pagination.total, 1)
})

t.test('get_workspace_info reports the index: counts, state, last scan; nothing without one', async (t) => {
  const f = await fixture(t, { 'a.ts': 'export function a () {}\n' })
  const search = { limits: { timeoutMs: 15000, maxFileSize: '10M', cacheTtlMs: 60000 }, engine: async () => ({ version: '15', source: 'x', pcre2Available: false }) }
  const catalog = { entries: () => [] }
  const info = await getWorkspaceInfo.run({ workspace: f.workspace, search, tokenizer, catalog, codeIndex: f.index } as never, toolContext())
  t.match(data(info).code_index, { state: 'ready', files: 1, chunks: 1, symbols: 1, pending: 1, done: 1, last_scan: /^\d{4}-/ })
  t.match(textOf(info), /\n## Code index \(find_symbol, search_code\)\n- ready; 1 source file, 1 chunk, 1 symbol; last scan \d{4}-[^ ]+ \(\d+\.\d s\)\n/)
  const building = await getWorkspaceInfo.run({ workspace: f.workspace, search, tokenizer, catalog, codeIndex: fakeIndex({ lastScanMs: undefined }) } as never, toolContext())
  t.match(textOf(building), /\n- being built: 40 of 100 changed files done so far; 40 source files, 80 chunks, 120 symbols\n/)
  t.notOk('last_scan' in data(building).code_index)
  t.match(textOf(await getWorkspaceInfo.run({ workspace: f.workspace, search, tokenizer, catalog, codeIndex: fakeIndex({ state: 'failed', error: 'x', lastScan: 0 }) } as never, toolContext())), /\n- failed \(x\); .*; last scan 1970-01-01T00:00:00\.000Z\n/)
  t.match(textOf(await getWorkspaceInfo.run({ workspace: f.workspace, search, tokenizer, catalog, codeIndex: fakeIndex({ state: 'failed', lastScan: 0, lastScanMs: 1500 }) } as never, toolContext())), /failed \(unknown error\).*\(1\.5 s\)/)
  const info2 = async (over: Partial<CodeIndexStatus>) => await getWorkspaceInfo.run({ workspace: f.workspace, search, tokenizer, catalog, codeIndex: fakeIndex(over) } as never, toolContext())
  t.match(textOf(await info2({ state: 'building', pending: 0, done: 0 })), /\n- being built: walking the tree; /)
  t.match(textOf(await info2({ state: 'ready', scanning: true })), /\n- ready \(a rescan runs behind it\); /)
  t.match(textOf(await info2({ state: 'ready', scanning: false, error: 'EIO' })), /\n- ready, but the last rescan failed \(EIO\); /)
  t.match(textOf(await info2({ state: 'failed', error: "Cannot find module '/opt/app/dist/bin/index-worker.js'" })), /\n- failed \(Cannot find module '\(a server path\)'\); /, 'an error\'s own paths are not shown')
  t.match(textOf(await info2({ state: 'ready', scanning: false, built: 0 })), /\n- ready; 40 source files, 80 chunks, 120 symbols; complete as of 1970-01-01T00:00:00\.000Z\n/)
  t.match(textOf(await info2({ state: 'ready', scanning: false, writer: 'process 1 on h since 00:00:00 UTC' })), /\n- written by another server \(process 1 on h since 00:00:00 UTC\); this one answers from what it writes\n/)
  t.match(textOf(await info2({ state: 'unavailable' })), /\n- unavailable; /, 'unavailable without a problem to tell')
  const full = await info2({ state: 'unavailable', problem: { kind: 'disk-full', stateDir: '/s', file: '/s/i', detail: 'd', freeBytes: 2048, neededBytes: 10 * 1048576, retryAt: 0 } })
  t.match(textOf(full), /\n- unavailable: the code index cannot be written: the disk of the state folder \(--state-dir\) is full \(2\.0 KB free; the index needs about 10\.0 MB for this workspace\)\. search_regex searches the files themselves; the operator can point --state-dir \(WORKSPACE_MCP_STATE_DIR\) at a writable volume with room; the server tries again at 00:00:00 UTC; /)
  t.match(data(full).code_index, { state: 'unavailable', problem: /^the code index cannot be written: the disk of the state folder \(--state-dir\) is full/ })
  const without = await getWorkspaceInfo.run({ workspace: f.workspace, search, tokenizer, catalog } as never, toolContext())
  t.notOk('code_index' in data(without))
  t.notMatch(textOf(without), /Code index/)
})

t.test('a call that may run as a task waits for the whole index (a second short of the task\'s allowance); a request waits 3 s', async (t) => {
  const waits: number[] = []
  const index: CodeIndex = { ...fakeIndex({ state: 'ready' }), ready: async (wait) => { waits.push(wait); return true } }

  t.same(await indexNotes(index, { ...toolContext(), taskBudgetMs: 600_000 }), [], 'the answer covers the whole index: no note')
  await indexNotes(index, toolContext())
  await indexNotes(index, { ...toolContext(), taskBudgetMs: 2000 })

  t.same(waits, [599_000, INDEX_WAIT_MS, INDEX_WAIT_MS])
  for (const tool of [findSymbol, searchCode]) t.same(tool.task, INDEX_TASK, `${tool.name} may run as a task`)
})
