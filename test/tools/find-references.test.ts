import fs from 'node:fs'
import path from 'node:path'
import pino from 'pino'
import t, { type Test } from 'tap'
import fc from 'fast-check'
import { Value } from '@sinclair/typebox/value'
import { createCodeIndex, type CodeIndex } from '../../src/services/code-index/code-index.js'
import { loadSqlite } from '../../src/services/code-index/index-schema.js'
import { createSearch, type SearchService } from '../../src/services/search/index.js'
import { createSymbolParser, locateTreeSitter, type SymbolParser, type TreeSitterLocation } from '../../src/services/symbols/parser.js'
import { createTokenizer } from '../../src/services/tokenizer/tokenizer.js'
import { createWorkspace, type WorkspaceService } from '../../src/services/workspace/workspace.js'
import { compileArguments } from '../../src/mcp/registry/validate.js'
import type { ToolResult } from '../../src/tool-api/define-tool.js'
import { findReferences, FindReferencesOutput } from '../../src/tools/find-references.js'
import { splitName } from '../../src/tool-kit/definitions.js'
import { MAX_PARSED_FILES } from '../../src/tool-kit/reference-fallback.js'
import { runs } from '../helpers/property.js'
import { tempDir, textOf, toolContext } from '../helpers/workspace-fixture.js'

const log = pino({ level: 'silent' })
const tokenizer = createTokenizer({ workers: 0 })
const sqlite = loadSqlite() as NonNullable<ReturnType<typeof loadSqlite>>
const where = locateTreeSitter() as TreeSitterLocation
const FIXTURES = new URL('../fixtures/references/', import.meta.url)

interface Fixture { root: string, workspace: WorkspaceService, index?: CodeIndex, search: SearchService, symbols: SymbolParser }

/** The reference fixtures in a temp workspace (plus `extra`), with a real index unless `indexed` is false. */
async function fixture (t: Test, extra: Record<string, string> = {}, indexed = true): Promise<Fixture> {
  const root = tempDir(t, 'wmcp-find-refs-')
  for (const name of fs.readdirSync(FIXTURES)) fs.copyFileSync(new URL(name, FIXTURES), path.join(root, name))
  for (const [name, text] of Object.entries(extra)) {
    fs.mkdirSync(path.dirname(path.join(root, name)), { recursive: true })
    fs.writeFileSync(path.join(root, name), text)
  }
  const workspace = await createWorkspace({ root, log })
  const search = await createSearch({ workspace, log })
  const symbols = createSymbolParser(where)
  t.teardown(async () => { search.close(); await symbols.close() })
  if (!indexed) return { root, workspace, search, symbols }
  const index = createCodeIndex({ workspace, treeSitter: where, log, sqlite, file: path.join(tempDir(t, 'wmcp-find-refs-state-'), 'index.sqlite') })
  t.teardown(() => index.close())
  await index.ready(120_000, new AbortController().signal)
  return { root, workspace, index, search, symbols }
}

const find = async (f: Fixture, args: Record<string, unknown>): Promise<ToolResult> =>
  await findReferences.run({ workspace: f.workspace, codeIndex: f.index, search: f.search, symbols: f.symbols, tokenizer, ...args } as never, toolContext())
const data = (r: ToolResult): Record<string, any> => r.structuredContent as Record<string, any>
const sites = (r: ToolResult): string[] => data(r).references.map((x: Record<string, unknown>) => `${String(x.path)}:${String(x.line)}:${String(x.column)} ${String(x.kind)}${x.container === undefined ? '' : ` in ${String(x.container)}`}${x.via === undefined ? '' : ` via ${String(x.via)}`}`)

for (const indexed of [true, false]) {
  const from = indexed ? 'from the index' : 'from a parse of the files holding the name (index off)'

  t.test(`${from}: references grouped by file, the enclosing definition named, how each was tied to the definition meant`, async (t) => {
    const f = await fixture(t, {}, indexed)
    const all = await find(f, { name: 'createUploader' })
    t.ok(Value.Check(FindReferencesOutput, data(all)))
    t.same(sites(all), ['app.js:1:10 import via import', 'app.js:3:16 call in shared via import', 'app.js:6:14 call in start via import', 'panel.tsx:29:28 call in Panel via same-file'])
    t.match(textOf(all), /^# References to "createUploader" — 4 in 2 files\n/)
    t.match(textOf(all), /\n2 definitions: panel\.tsx:20 \(function\), upload\.ts:20 \(function\)\.\nEach file's references are tied to a definition by: the file that defines it, then \(Go, Java\) the package folder, then the files that include or import that file directly; a file with none of these ties is kept as naming it only \(via name\)\.\nPass definition="panel\.tsx:20" \(or another\) to keep one\.\n/)
    t.match(textOf(all), /\n## app\.js — 3 references \(includes or imports the definition\)\ntop level:\n {2}1:10 import — import \{ createUploader \} from '\.\/upload\.js'\nin constant shared \(3-3\):\n {2}3:16 call — const shared = createUploader\(\{\}\)\nin function start \(5-8\):\n {2}6:14 call — const up = createUploader\(name\)\n## panel\.tsx — 1 reference \(defined here\)\nin function Panel \(28-30\):\n/)
    t.match(textOf(all), /\nReferences 1–4 of 4 \| next: none$/)
    t.same(sites(await find(f, { name: 'createUploader', definition: 'upload.ts' })), ['app.js:1:10 import via import', 'app.js:3:16 call in shared via import', 'app.js:6:14 call in start via import'], 'the definition meant, by its file')
    t.same(sites(await find(f, { name: 'createUploader', definition: './panel.tsx:20' })), ['panel.tsx:29:28 call in Panel via same-file'], 'by file and line')
    t.match(textOf(await find(f, { name: 'createUploader', definition: 'panel.tsx:20' })), /\n2 definitions; kept: panel\.tsx:20 \(function\)\.\n/)
    t.same(sites(await find(f, { name: 'createUploader', kind: 'import' })), ['app.js:1:10 import via import'], 'one kind')
    t.same(sites(await find(f, { name: 'Uploader.send' })), ['app.js:7:13 call in start via import', 'panel.tsx:22:12 call in createUploader via same-file', 'upload.ts:22:12 call in createUploader via same-file'], 'the owner\'s definitions')
    t.same(sites(await find(f, { name: 'kmalloc', path: 'slab.c' })), ['slab.c:12:7 declaration', 'slab.c:18:14 call in cache_alloc'])
    t.match(textOf(await find(f, { name: 'kmalloc' })), /\nNo definition of "kmalloc" is indexed \(it may come from a library, or be made by a macro\): these are the uses of the name\.\n/)
    t.match(textOf(await find(f, { name: 'helper' })), /\nDefined at tasks\.py:15 \(function\)\.\n## tasks\.py — 1 reference\nin method Runner\.run \(6-9\):\n {2}7:17 call — total = helper\(job\)\n/)
    const none = await find(f, { name: 'nothing_uses_this', kind: 'call' })
    t.match(textOf(none), /^# Call references to "nothing_uses_this" — 0 in 0 files\n.*\nNo indexed file uses "nothing_uses_this" as a call\. search_regex pattern="nothing_uses_this" finds it as text \(comments and strings too\)\.\nReferences 0 of 0 \| next: none$/s)
    t.match(textOf(await find(f, { name: '$scope' })), /search_regex pattern="\\\$scope"/, 'a name with $ is searched for as the literal it is')
    if (!indexed) t.match(textOf(all), /\nNote: the code index is off, so the 3 files holding "createUploader" were parsed now\.\n/)
  })

  t.test(`${from}: bad names, definitions, owners and paths are errors naming the argument, with the next call`, async (t) => {
    const f = await fixture(t, {}, indexed)
    await t.rejects(find(f, { name: 'kmalloc(.*' }), { message: /^ERROR INVALID_ARGUMENT: name: "kmalloc\(\.\*" is not a name as code spells one \(letters, digits, _ and \$\)\. Hint: pass an identifier, e.g\. name="kmalloc"; search_regex finds any other text\.$/ })
    await t.rejects(find(f, { name: 'createUploader', definition: 'nowhere.ts' }), { message: /^ERROR INVALID_ARGUMENT: definition: "nowhere\.ts" names none of them: the definitions of "createUploader" are panel\.tsx:20, upload\.ts:20\. Hint: pass one of them, e.g\. definition="panel\.tsx:20"\.$/ })
    await t.rejects(find(f, { name: 'kmalloc', definition: 'slab.c:1' }), { message: /^ERROR INVALID_ARGUMENT: definition: "slab\.c:1" names none of them: no definition of "kmalloc" is indexed\. Hint: leave definition out to see every use of "kmalloc"\.$/ })
    await t.rejects(find(f, { name: 'Mailer.send' }), { message: /^ERROR INVALID_ARGUMENT: name: no definition of "send" belongs to "Mailer"\. Hint: find_symbol name="send" lists its definitions and their owners\.$/ })
    await t.rejects(find(f, { name: 'kmalloc', path: '../outside' }), { message: /^ERROR PATH_OUTSIDE_ROOT/ })
    t.same(data(await find(f, { name: 'kmalloc', path: '.' })).references.length, 2, 'the root is everywhere')
  })
}

t.test('hostile arguments never reach the search as anything but a name: regex metacharacters, huge pages', async (t) => {
  const f = await fixture(t, {}, false)
  await fc.assert(fc.asyncProperty(fc.stringMatching(/^[a-z]{1,4}[.*+?()[\]{}|\\^-][a-z.*]{0,4}$/), async (name) => {
    await t.rejects(find(f, { name }), { message: /^ERROR INVALID_ARGUMENT: (name: "|name: no definition)/ })
  }), runs(25))
  const validate = compileArguments(findReferences.input, new Set(['workspace', 'codeIndex', 'search', 'symbols', 'tokenizer']))
  t.match(validate({ name: 'a', page_size: 1e9 }), { ok: false, message: /^page_size: / })
  t.match(validate({ name: 'a', max_response_tokens: 1e9 }), { ok: false, message: /^max_response_tokens: / })
  t.match(validate({ name: 'a'.repeat(201) }), { ok: false, message: /^name: / })
  t.match(validate({ name: 'a', kind: 'callers' }), { ok: false, message: /^kind: / })
  t.same(splitName('a::b'), { owner: 'a', name: 'b' })
})

t.test('pages of references: the budget cuts a page, the next call continues, every reference once', async (t) => {
  const calls = Array.from({ length: 120 }, (_, i) => `\ttarget(${i});`).join('\n')
  const f = await fixture(t, { 'many.c': `void target(int n);\nvoid caller(void)\n{\n${calls}\n}\n`, 'more.c': 'void other(void) { target(1); }\n' })
  const seen: string[] = []
  let offset = 0
  let cut = false
  for (let i = 0; i < 20; i++) {
    const page = await find(f, { name: 'target', page_size: 200, offset, max_response_tokens: 1000 })
    t.ok(await tokenizer.countExact(textOf(page)) <= 1000, 'never over the budget')
    cut ||= /\nNote: page cut to \d+ references to fit max_response_tokens=1000; the next call continues\n/.test(textOf(page))
    seen.push(...sites(page))
    const p = data(page).pagination
    if (!p.has_more) break
    t.match(textOf(page), new RegExp(`\\| next: find_references name="target" page_size=200 max_response_tokens=1000 offset=${p.next_offset as number}$`))
    offset = p.next_offset
  }
  t.ok(cut, 'the budget cut a page')
  t.equal(seen.length, 122)
  t.equal(new Set(seen).size, 122, 'no reference twice')
  t.same(seen.slice(0, 2), ['many.c:1:6 declaration', 'many.c:4:2 call in caller'])
  t.same(seen.at(-1), 'more.c:1:20 call in other')
  const past = await find(f, { name: 'target', offset: 500 })
  t.same(data(past).references, [], 'a page past the end is empty')
  // A file changed since it was indexed: its references say so rather than show other lines.
  fs.writeFileSync(path.join(f.root, 'more.c'), '\n\n')
  t.match(textOf(await find(f, { name: 'target', path: 'more.c' })), /\n {2}1:20 call \(the file changed since it was indexed; read_files reads it now\)\n/)
  fs.rmSync(path.join(f.root, 'more.c'))
  t.match(textOf(await find(f, { name: 'target', offset: 121 })), /\n## more\.c — 1 reference\nin function other \(1-1\):\n {2}1:20 call \(the file changed since it was indexed; read_files reads it now\)\n/, 'or went away')
})

t.test('a name with many definitions, a use far right on its line, a session that sees part of the workspace', async (t) => {
  const dups = Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`d${String(i).padStart(2, '0')}.c`, 'void dup(void) { }\n']))
  const f = await fixture(t, { ...dups, 'far.c': `void far(void) {${' '.repeat(1100)}dup(); }\n`, 'sub/inner.c': 'void inner(void) { dup(); }\n', 'upper.h': '#define DUP 1\n', 'early.c': `void early(void) { dup(); /* ${'x'.repeat(300)} */ }\n`, 'glob.c': 'void (*hook)(void) = dup;\n' })
  const all = await find(f, { name: 'dup' })
  t.match(textOf(all), /\n11 definitions: d00\.c:1 \(function\), [^\n]*, d09\.c:1 \(function\), and 1 more\.\n/)
  t.same(sites(all), ['early.c:1:20 call in early via name', 'far.c:1:1023 call in far via name', 'glob.c:1:22 reference via name', 'sub/inner.c:1:20 call in inner via name'])
  t.match(textOf(all), /\n## early\.c — 1 reference \(tied by name only\)\nin function early \(1-1\):\n {2}1:20 call — void early\(void\) \{ dup\(\); \/\* x{171}…\n## far\.c/, 'a long line cut after the use')
  t.match(textOf(all), /\n## glob\.c — 1 reference \(tied by name only\)\ntop level:\n {2}1:22 reference — void \(\*hook\)\(void\) = dup;\n/, 'a file with no definitions')
  t.match(textOf(all), /\n {2}1:1023 call — … +dup\(\); \}\n/, 'a long line is shown around the use, found again past the column kept')
  await t.rejects(find(f, { name: 'dup', definition: 'nope.c' }), { message: /are d00\.c:1, .*, d09\.c:1, …\. Hint: pass one of them, e\.g\. definition="d00\.c:1"\.$/ })
  await t.rejects(find(f, { name: 'dup', definition: path.join(f.root, 'd00.c') }), { message: /^ERROR INVALID_ARGUMENT: definition: "definition \(absolute path\)" names none of them/ }, 'an absolute path is never echoed')
  // A session whose client roots narrow the workspace sees only what is under them, definitions included.
  const narrowed = { ...f, workspace: await createWorkspace({ root: path.join(f.root, 'sub'), log }) }
  const inner = await find(narrowed, { name: 'dup' })
  t.same(sites(inner), ['inner.c:1:20 call in inner'])
  t.match(textOf(inner), /\nNo definition of "dup" is indexed/)
})

t.test('without the index, at most MAX_PARSED_FILES files are parsed, those in the path asked first; the totals say they are a floor', async (t) => {
  const many = Object.fromEntries(Array.from({ length: MAX_PARSED_FILES + 2 }, (_, i) => [`gen/f${String(i).padStart(3, '0')}.c`, `void f${i}(void) { target(); }\n`]))
  const f = await fixture(t, { ...many, 'zz/last.c': 'void last(void) { target(); }\n' }, false)
  const scoped = await find(f, { name: 'target', path: 'zz' })
  t.same(sites(scoped), ['zz/last.c:1:19 call in last'], 'the file in the path asked is parsed first')
  const all = await find(f, { name: 'target', page_size: 1 })
  t.equal(data(all).pagination.total, MAX_PARSED_FILES)
  t.equal(data(all).pagination.total_is_lower_bound, true)
  t.match(textOf(all), /^# References to "target" — 300\+ in 300 files\nNote: the code index is off, so the 300 files holding "target" were parsed now; 3 more hold it and were not \(the totals are lower bounds: narrow with path\)\.\n/)
})

t.test('without the index: a file too big to parse is passed by; a search cut short makes the totals a floor', async (t) => {
  const f = await fixture(t, { 'big.c': `void big(void) { target(); }\n${'/* padding */\n'.repeat(170_000)}`, 'small.c': 'void small(void) { target(); target(); }\n' }, false)
  t.same(sites(await find(f, { name: 'target' })), ['small.c:1:20 call in small', 'small.c:1:30 call in small'], 'big.c (over 2 MB) is not parsed')
  const cut = { ...f, search: await createSearch({ workspace: f.workspace, log, maxFiles: 1 }) }
  t.teardown(() => cut.search.close())
  const partial = await find(cut, { name: 'target' })
  t.equal(data(partial).pagination.total_is_lower_bound, true)
  t.match(textOf(partial), /; 1 more holds it and was not \(the totals are lower bounds: narrow with path\)\./)
})
