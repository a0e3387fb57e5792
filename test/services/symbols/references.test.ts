import fs from 'node:fs'
import t from 'tap'
import fc from 'fast-check'
import { SYMBOL_LANGUAGES, symbolLanguageOf, type SymbolLanguage } from '../../../src/services/symbols/languages.js'
import { createSymbolParser, locateTreeSitter, type TreeSitterLocation } from '../../../src/services/symbols/parser.js'
import { parserHandler } from '../../../src/services/symbols/parse-handler.js'
import { REFERENCE_QUERIES } from '../../../src/services/symbols/reference-queries.js'
import { kindStart, MAX_COLUMN, nameOfToken, nameToken, packSite, REFERENCE_KINDS, referenceSites, siteWords, sitesBlob, unpackSite, type FileReferences, type ReferenceSite } from '../../../src/services/symbols/references.js'
import { runs } from '../../helpers/property.js'

// Golden references of one file per grammar (test/fixtures/references): the real grammars and queries, as the
// index parses them — through the parsing thread's own handler, in this process. `UPDATE_GOLDEN=1` rewrites the
// expected lists after an intended change.

const FIXTURES = new URL('../../fixtures/references/', import.meta.url)
const GOLDEN = new URL('../../golden/references/', import.meta.url)
const where = locateTreeSitter() as TreeSitterLocation
const parse = parserHandler(where)

const shown = (sites: readonly ReferenceSite[]): string => [...sites].sort((a, b) => a.line - b.line || a.column - b.column).map(s => `${s.line}:${s.column} ${s.kind} ${s.name}\n`).join('')

async function referencesOf (text: string, file: string): Promise<{ sites: ReferenceSite[], imports: string[] }> {
  const language = symbolLanguageOf(file) as SymbolLanguage
  const parsed = await parse({ grammar: language.grammar, query: language.query, text, dialect: language.dialect, references: REFERENCE_QUERIES[language.grammar] })
  const refs = parsed.references as NonNullable<typeof parsed.references>
  return { sites: referenceSites(refs), imports: refs.imports }
}

t.test('every grammar has a reference query, and each fixture\'s references are as the golden file says', async (t) => {
  const grammars = new Set([...SYMBOL_LANGUAGES.values()].map(l => l.grammar))
  t.same([...grammars].filter(g => REFERENCE_QUERIES[g] === undefined), [], 'each language the index parses')
  const fixtures = fs.readdirSync(FIXTURES).sort()
  t.same([...grammars].filter(g => !fixtures.some(f => symbolLanguageOf(f)?.grammar === g)), [], 'one fixture per grammar at least')
  for (const file of fixtures) {
    const { sites, imports } = await referencesOf(fs.readFileSync(new URL(file, FIXTURES), 'utf8'), file)
    const listed = `imports: ${imports.join(', ')}\n${shown(sites)}`
    const golden = new URL(`${file}.txt`, GOLDEN)
    if (process.env.UPDATE_GOLDEN === '1') fs.writeFileSync(golden, listed)
    t.equal(listed, fs.readFileSync(golden, 'utf8'), file)
  }
  // The parsing thread itself, asked with and without references.
  const parser = createSymbolParser(where)
  t.teardown(() => parser.close())
  const slab = fs.readFileSync(new URL('slab.c', FIXTURES), 'utf8')
  const language = symbolLanguageOf('slab.c') as SymbolLanguage
  t.equal((await parser.definitions(slab, language)).references, undefined, 'references only when asked for')
  t.equal(shown(referenceSites((await parser.definitions(slab, language, undefined, { references: true })).references as FileReferences)), fs.readFileSync(new URL('slab.c.txt', GOLDEN), 'utf8').split('\n').slice(1).join('\n'))
})

t.test('C: calls in macro bodies, locals of their block only, a misread statement after an iterator macro still a call', async (t) => {
  const text = [
    '#define WRAP(x, y) helper(x)->field + other(y) ## suffix + #x + struct_name + "helper(no)" + \\',
    '\t(struct item *)0 + 0x1fULL + sizeof(int) /* helper(no) */',
    'void use(struct cpumask ***masks, int n)',
    '{',
    '\tint i, j;',
    '\tkfree(masks);',
    '\tfor (i = 0; i < n; i++) {',
    '\t\tfor_each_node(j)',
    '\t\t\tkfree(masks[i][j]);',
    '\t}',
    '\t{ int kfree_later = 1; kfree_later++; }',
    '\tkfree_later();',
    `\t${'y'.repeat(201)}();`,
    '}'
  ].join('\n')
  const { sites } = await referencesOf(text, 'a.c')
  t.same(shown(sites).split('\n'), [
    '1:20 call helper',
    '1:31 field field',
    '1:39 call other',
    '1:65 reference struct_name',
    '2:10 type item',
    '3:17 type cpumask',
    '6:2 call kfree',
    '8:3 call for_each_node',
    '9:4 call kfree',
    '12:2 call kfree_later',
    ''
  ])
})

t.test('C: a declaration tree-sitter completes with a made-up (zero-width) name still parses, its real uses kept', async (t) => {
  // mm/slub.c and kernel/sched/core.c: before, the made-up name stopped the parse and the whole file left the index.
  const text = [
    'static DEFINE_PER_CPU(struct slub_flush_work, slub_flush);',
    'void sched_core_put(void)',
    '{',
    '\tstatic DECLARE_WORK(_work, __sched_core_put);',
    '\tqueue_work(system_wq, &_work);',
    '}'
  ].join('\n')
  const { sites } = await referencesOf(text, 'a.c')
  t.ok(sites.some(s => s.line === 5 && s.kind === 'call' && s.name === 'queue_work'), shown(sites))
  t.ok(sites.some(s => s.line === 1 && s.name === 'slub_flush_work'), shown(sites))
})

t.test('tokens keep names apart by case, read back, and refuse what the full-text index would split', async (t) => {
  t.equal(nameToken('kmalloc'), 'kmalloc')
  t.equal(nameToken('getUser'), 'get#user')
  t.equal(nameToken('Éclair'), '#éclair')
  t.equal(nameToken('a'.repeat(201)), undefined, 'too long')
  t.equal(nameToken('Ab'.repeat(101)), undefined, 'too long, with capitals')
  t.equal(nameToken('a-b'), undefined, 'a character that splits')
  t.equal(nameToken('İx'), undefined, 'a capital whose lower case is longer')
  t.equal(nameOfToken('get#user'), 'getUser')
  fc.assert(fc.property(fc.stringMatching(/^[A-Za-z_$][A-Za-z0-9_$]{0,40}$/), (name) => {
    const token = nameToken(name) as string
    return nameOfToken(token) === name && token === token.toLowerCase()
  }), runs(300))
})

t.test('sites pack line and column in 32 bits, a column past the limit kept at it; blobs read back at any alignment', async (t) => {
  t.same(unpackSite(packSite(4_000_000, 12)), { line: 4_000_000, column: 12 })
  t.same(unpackSite(packSite(3, 5000)), { line: 3, column: MAX_COLUMN })
  const words = new Uint32Array([...REFERENCE_KINDS.map((_, k) => k === 1 ? 2 : 0), packSite(1, 2), packSite(3, 4)])
  const blob = sitesBlob(words)
  const shifted = new Uint8Array(blob.length + 1)
  shifted.set(blob, 1)
  t.same([...siteWords(shifted.subarray(1))], [...words])
  t.equal(kindStart(words, 2), REFERENCE_KINDS.length + 2)
  t.same(referenceSites({ names: ['', 'a b', '', '', '', '', ''], sites: blob }), [{ name: 'a', kind: 'reference', line: 1, column: 2 }, { name: 'b', kind: 'reference', line: 3, column: 4 }])
})
