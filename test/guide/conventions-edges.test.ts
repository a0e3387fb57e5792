// The convention rules over hand-built catalog entries: the shapes a TypeBox tool never produces (a
// schema without properties, a property that is not a schema) and each rule's less common arm.
import t from 'tap'
import { checkBudget, lintConventions, RULES, type Violation } from '../../src/guide/conventions.js'
import type { CatalogEntry } from '../../src/services/catalog.js'
import { createTokenizer } from '../../src/services/tokenizer/tokenizer.js'

const entry = (overrides: Partial<CatalogEntry>): CatalogEntry => ({
  name: 'read_notes',
  title: 'Read Notes',
  category: 'read',
  description: 'Read a note with line numbers, one per call.\n\nUse list_notes first to see which notes exist.',
  inputSchema: { type: 'object', properties: { path: { type: 'string', description: 'Note to read, e.g. "todo.md"' } } },
  annotations: { readOnlyHint: true },
  examples: [],
  validate: () => [],
  ...overrides
})
const messages = (violations: Violation[], tool?: string) => violations.filter(v => tool === undefined || v.tool === tool).map(v => `${v.rule.name}: ${v.message}`)

t.test('a clean pair raises nothing; a schema without properties is a tool without parameters', async (t) => {
  const lister = entry({ name: 'list_notes', title: 'List Notes', description: 'List the notes of the workspace, newest first, one line each.\n\nRead one with read_notes.' })
  t.strictSame(lintConventions([entry({}), lister]), [])
  t.strictSame(messages(lintConventions([entry({ inputSchema: { type: 'object' } }), lister])), [])
})

t.test('parameters: plural and singular twins, a property that is not a schema, a non-string description, nested objects', async (t) => {
  const props = {
    entries: { type: 'array', items: { type: 'string' }, description: 'Entries to read, e.g. ["a"]' },
    entry: { type: 'string', description: 'One entry to read, e.g. "a"' },
    odd: 5,
    count: { type: 'integer', description: 42 },
    options: { type: 'object', description: 'Options of the read, e.g. {"wrap":true}', properties: { Wrap: { type: 'boolean', description: 'Wrap long lines at 80' } } }
  }
  const found = messages(lintConventions([entry({ inputSchema: { type: 'object', properties: props } })]))

  t.ok(found.includes(`${RULES.batch.name}: has both 'entry' and 'entries'; drop 'entry' and batch through the one list field 'entries'`))
  t.ok(found.some(m => m.includes("parameter 'count' has no description")))
  t.ok(found.some(m => m.includes("parameter 'options.Wrap' is not snake_case")), 'nested object properties are checked under their path')
  t.notOk(found.some(m => m.includes("'odd'")), 'a property that is not a schema is skipped')
})

t.test('first sentence, naming and annotations: the rarer ways to break them', async (t) => {
  const found = messages(lintConventions([entry({
    name: 'ReadNotes',
    description: '42 notes are read here, one per call.\n\nUse list_notes first.',
    annotations: {}
  })]))
  t.ok(found.some(m => m.includes("first sentence starts with '42'")))
  t.ok(found.some(m => m.includes('name is not snake_case')))
  t.ok(found.some(m => m.includes('needs annotations')))

  const noReadOnly = messages(lintConventions([entry({ annotations: { idempotentHint: true } })]))
  t.ok(noReadOnly.some(m => m.includes('annotations must state readOnlyHint')))
  const noAnnotations = messages(lintConventions([entry({ annotations: undefined as unknown as Record<string, unknown> })]))
  t.ok(noAnnotations.some(m => m.includes('needs annotations')), 'missing annotations entirely')
})

t.test('get_* tools: alone they need no partner; with others, a one-paragraph description is told to add one', async (t) => {
  const getter = entry({ name: 'get_note_info', title: 'Get Note Info', description: 'Get size and lines of notes, one per call.' })
  t.strictSame(messages(lintConventions([getter])).filter(m => m.startsWith(RULES.partner.name)), [])
  const other = entry({ name: 'search_notes', title: 'Search Notes', description: 'Search the notes for a word, one per call.\n\nRead hits with get_note_info.' })
  t.ok(messages(lintConventions([getter, other]), 'get_note_info').some(m => m.includes('names its list/batch partner (another tool, e.g. list_directory) in its second paragraph; add that paragraph')))
})

t.test('the per-tool allowance names a tool over it, with the outputSchema share when it has one', async (t) => {
  const tokenizer = createTokenizer()
  t.teardown(() => { tokenizer.close().catch(() => {}) })
  const big = { name: 'big_tool', description: 'word '.repeat(400) }
  const withOutput = { name: 'out_tool', description: 'word '.repeat(300), outputSchema: { type: 'object', properties: { x: { type: 'string', description: 'word '.repeat(300) } } } }

  const report = await checkBudget(JSON.stringify([big, withOutput]), tokenizer, 200)

  t.match(report.violations, [
    { tool: 'big_tool', message: /over the 200-token allowance per tool \(its outputSchema is ~0% of it\)/ },
    { tool: 'out_tool', message: /its outputSchema is ~[1-9]\d*% of it/ }
  ])
})
