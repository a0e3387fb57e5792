import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import t from 'tap'
import { buildOutline, type OutlineSymbol } from '../../../src/services/symbols/outline.js'
import { SYMBOL_LANGUAGES, symbolLanguageOf, type SymbolLanguage } from '../../../src/services/symbols/languages.js'
import { createSymbolParser, locateTreeSitter, symbolParser, type TreeSitterLocation } from '../../../src/services/symbols/parser.js'
import { warmSamples } from '../../../src/services/symbols/warm-up.js'

// Golden outlines of one small file per grammar: loading every grammar into the pinned runtime and running its
// query is what an ABI break between web-tree-sitter and the grammar package would fail, here and not for users.
// `UPDATE_GOLDEN=1` rewrites the expected outlines after an intended change.

const FIXTURES = new URL('../../fixtures/symbols/', import.meta.url)
const GOLDEN = new URL('../../golden/outlines/', import.meta.url)
const where = locateTreeSitter() as TreeSitterLocation

function shown (symbols: OutlineSymbol[]): string {
  return symbols.map(s => `${'  '.repeat(s.depth - 1)}${s.line}-${s.endLine} ${s.kind} ${s.name}${s.container !== undefined ? ` in ${s.container}` : ''}: ${s.signature}\n`).join('')
}

t.test('every grammar loads and outlines its fixture as the golden file says', async (t) => {
  t.not(where, null, 'web-tree-sitter and the grammars are installed')
  const parser = createSymbolParser(where)
  const fixtures = fs.readdirSync(FIXTURES).sort()
  const grammars = new Set([...SYMBOL_LANGUAGES.values()].map(l => l.grammar))
  const covered = new Set(fixtures.map(f => symbolLanguageOf(f)?.grammar))
  t.same([...grammars].filter(g => !covered.has(g)), [], 'one fixture per grammar at least')
  for (const file of fixtures) {
    const language = symbolLanguageOf(file) as SymbolLanguage
    const text = fs.readFileSync(new URL(file, FIXTURES), 'utf8')
    const lines = text.split('\n')
    const parsed = await parser.definitions(text, language)
    t.equal(parsed.hasErrors, false, `${file} parses without errors`)
    const outline = shown(buildOutline(parsed.definitions, lines))
    const golden = new URL(`${file}.txt`, GOLDEN)
    if (process.env.UPDATE_GOLDEN === '1') fs.writeFileSync(golden, outline)
    t.equal(outline, fs.readFileSync(golden, 'utf8'), `${file} (${language.name})`)
  }
})

t.test('the outline: nesting, methods, one symbol per node, signatures', async (t) => {
  const parser = createSymbolParser(where)
  const ts = symbolLanguageOf('a.ts') as SymbolLanguage
  const source = [
    'export const f = () => 1',
    'class A {',
    '  m () {',
    '    const inner = function () {}',
    '  }',
    '}',
    `export function ${'long'.repeat(60)} () {}`,
    'export const 𝒜 = 1',
    `function e${'x'.repeat(189)}𝒜 () {}`
  ].join('\n')
  const outline = buildOutline((await parser.definitions(source, ts)).definitions, source.split('\n'))
  t.match(outline, [
    { kind: 'function', name: 'f', line: 1, endLine: 1, depth: 1 },
    { kind: 'class', name: 'A', line: 2, endLine: 6, depth: 1 },
    { kind: 'method', name: 'm', container: 'A', depth: 2 },
    { kind: 'function', name: 'inner', container: 'm', depth: 3 },
    { kind: 'function', signature: /^export function (long)+…$/ },
    { kind: 'constant', name: '𝒜' },
    { kind: 'function' }
  ])
  t.equal(outline[4].signature.length, 201, '200 characters and the ellipsis')
  t.notOk(/[\ud800-\udbff]…$/.test(outline[6].signature), 'a cut never splits a surrogate pair')

  // A C head over two lines (kernel style) is one signature; a body-less prototype is not a definition.
  const c = symbolLanguageOf('a.c') as SymbolLanguage
  const kernel = 'static int\nretry(struct u *u)\n{\n\treturn 0;\n}\nint proto(void);\n'
  t.match(buildOutline((await parser.definitions(kernel, c)).definitions, kernel.split('\n')), [{ kind: 'function', name: 'retry', line: 1, endLine: 5, signature: 'static int retry(struct u *u)' }])
  t.equal(buildOutline((await parser.definitions(kernel, c)).definitions, kernel.split('\n')).length, 1)

  // The kernel's annotation macros break the grammar's function shape: they are blanked before parsing, and
  // an unknown one still leaves the ERROR-then-body shape, which the query reads as a definition too.
  const attributed = 'static __always_inline __alloc_size(1) void *kmalloc(size_t size, gfp_t flags)\n{\n\treturn 0;\n}\n'
  const clean = await parser.definitions(attributed, c)
  t.equal(clean.hasErrors, false, 'blanked annotations parse cleanly')
  t.match(buildOutline(clean.definitions, attributed.split('\n')), [{ kind: 'function', name: 'kmalloc', line: 1, endLine: 4, signature: 'static __always_inline __alloc_size(1) void *kmalloc(size_t size, gfp_t flags)' }])
  const broken = await parser.definitions(attributed, { ...c, dialect: undefined })
  t.equal(broken.hasErrors, true)
  t.match(buildOutline(broken.definitions, attributed.split('\n')), [{ kind: 'function', name: 'kmalloc', line: 1, endLine: 4 }])
})

t.test('Python: a name bound to a lambda is a function, in a module or in a function', async (t) => {
  const parser = createSymbolParser(where)
  t.teardown(() => parser.close())
  const python = symbolLanguageOf('a.py') as SymbolLanguage
  const source = 'currentframe = lambda: sys._getframe(1)\ndef digest(algorithm):\n    H = lambda x: md5(x)\n    return H\nLIMIT = 3\n'

  const outline = buildOutline((await parser.definitions(source, python)).definitions, source.split('\n'))

  t.same(shown(outline), '1-1 function currentframe: currentframe = lambda: sys._getframe(1)\n2-4 function digest: def digest(algorithm):\n  3-3 function H in digest: H = lambda x: md5(x)\n5-5 constant LIMIT: LIMIT = 3\n')
})

t.test('one symbol per definition node: a constant gives way to what else names the node, in either order', async (t) => {
  const raw = { container: undefined, start: 0, nameRow: 0, end: 0, endColumn: 10, from: 0, to: 10 }
  const lines = ['const f = () => 1']
  t.match(buildOutline([{ ...raw, kind: 'constant', name: 'f' }, { ...raw, kind: 'function', name: 'f' }], lines), [{ kind: 'function' }])
  t.match(buildOutline([{ ...raw, kind: 'function', name: 'f' }, { ...raw, kind: 'constant', name: 'f' }], lines), [{ kind: 'function' }])
  t.equal(buildOutline([{ ...raw, kind: 'function', name: 'f' }, { ...raw, kind: 'constant', name: 'f' }], lines).length, 1)
  // Two nodes starting together: the longer one holds the other.
  t.match(buildOutline([{ ...raw, kind: 'function', name: 'inner', to: 5 }, { ...raw, kind: 'class', name: 'outer' }], lines), [{ name: 'outer', depth: 1 }, { name: 'inner', kind: 'method', depth: 2, container: 'outer' }])
  // A node ending at column 0 of the next line ends on the line above.
  t.match(buildOutline([{ ...raw, kind: 'function', name: 'g', end: 3, endColumn: 0 }], ['a', 'b', 'c', 'd']), [{ line: 1, endLine: 3 }])
})

t.test('the parser: not installed, a failing runtime, a stuck parse, cancellation, a bad query', async (t) => {
  t.equal(locateTreeSitter(() => { throw new Error('Cannot find module') }), null, 'not installed')
  const warnings: string[] = []
  const log = { warn: (msg: string) => warnings.push(msg) } as unknown as Parameters<typeof symbolParser>[0]
  t.equal(symbolParser(log, null), undefined, 'no parser, so get_symbols is not listed')
  t.same(warnings, ['web-tree-sitter or its grammars are not installed: get_symbols disabled'])
  t.ok(symbolParser(log), 'installed here')
  t.match(where, { runtime: /web-tree-sitter\.cjs$/, grammars: /tree-sitter-wasms[/\\]out$/ })
  const ts = symbolLanguageOf('a.ts') as SymbolLanguage

  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wmcp-ts-runtime-'))
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }))
  // Stand-in runtimes: one that crashes its thread later, one whose init never ends.
  fs.writeFileSync(path.join(dir, 'crash.cjs'), 'setTimeout(() => { throw new Error("boom") }, 10)\nexports.Parser = { init: () => new Promise(() => {}) }\n')
  fs.writeFileSync(path.join(dir, 'hang.cjs'), 'exports.Parser = { init: () => new Promise(() => {}) }\n')
  const crashing = createSymbolParser({ runtime: path.join(dir, 'crash.cjs'), grammars: where.grammars })
  await t.rejects(crashing.definitions('x', ts), { message: 'ERROR PARSE_FAILED: the parser stopped: boom.', next: { step: 'read-or-grep' } })
  await t.rejects(crashing.definitions('x', ts), { message: /ERROR PARSE_FAILED/ }, 'a later call starts a fresh thread')

  const hanging = createSymbolParser({ runtime: path.join(dir, 'hang.cjs'), grammars: where.grammars })
  const controller = new AbortController()
  const stuck = hanging.definitions('x', ts, controller.signal)
  const queued = hanging.definitions('y', ts, controller.signal)
  setTimeout(() => controller.abort(), 50)
  await t.rejects(stuck, { message: /ERROR CANCELLED: the outline was stopped/ })
  await t.rejects(queued, { name: 'AbortError' }, 'a queued file of the same call is not started')
  await t.rejects(hanging.definitions('x', ts, controller.signal), { name: 'AbortError' }, 'an aborted signal is refused before any work')

  const real = createSymbolParser(where)
  await t.rejects(real.definitions('x', { name: 'Broken', grammar: ts.grammar, query: '(no_such_node) @definition.function' }), { message: /ERROR PARSE_FAILED: the parser stopped: .*no_such_node/ })
  await t.rejects(real.definitions('x', { name: 'Missing', grammar: 'tree-sitter-none.wasm', query: '' }), { message: /ERROR PARSE_FAILED/ })
  t.match(await real.definitions('const a = 1', ts, new AbortController().signal), { definitions: [{ kind: 'constant', name: 'a' }], hasErrors: false }, 'the thread serves on after failures')

  // A definition whose query captured no name is skipped, not shown nameless.
  t.same((await real.definitions('class A {}', { ...ts, query: '(class_declaration) @definition.class' })).definitions, [])
})

t.test('the warm-up samples are code the grammars read whole: every unit outlined, no parse error; warm() parses them', async (t) => {
  const parser = createSymbolParser(where)
  t.teardown(() => parser.close())
  const kinds = (symbols: OutlineSymbol[]): Record<string, number> => symbols.reduce<Record<string, number>>((n, s) => ({ ...n, [s.kind]: (n[s.kind] ?? 0) + 1 }), {})
  const samples = warmSamples()
  t.same(samples.map(s => s.language.name), ['C', 'TypeScript'])
  const [c, ts] = await Promise.all(samples.map(async ({ language, text }) => await parser.definitions(text, language)))
  t.same([c.hasErrors, ts.hasErrors], [false, false])
  t.same(kinds(buildOutline(c.definitions, samples[0].text.split('\n'))), { macro: 240, type: 80, enum: 80, union: 80, struct: 80, function: 80 })
  t.same(kinds(buildOutline(ts.definitions, samples[1].text.split('\n'))), { interface: 20, class: 20, method: 20 })
  await parser.warm()
  t.equal((await parser.definitions('int after_warm(void) { return 0; }\n', samples[0].language)).definitions[0].name, 'after_warm', 'the thread serves as before')
})
