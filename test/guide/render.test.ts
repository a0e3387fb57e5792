// The guide's Markdown from hand-written schemas and catalog entries: every type, limit and nesting the
// renderer knows, categories outside the fixed list, tools without docs, and the one-line index.
import t from 'tap'
import { limitsOf, parameterTable, renderIndex, renderSections } from '../../src/guide/render.js'
import type { CatalogEntry } from '../../src/services/catalog.js'

const entry = (overrides: Partial<CatalogEntry>): CatalogEntry => ({
  name: 'read_notes',
  title: 'Read Notes',
  category: 'read',
  description: 'Read notes. More detail here.',
  inputSchema: { type: 'object', properties: {} },
  annotations: { readOnlyHint: true },
  examples: [],
  validate: () => [],
  ...overrides
})

t.test('limits: ranges open on either side, exclusive minimums, patterns, per-item limits', async (t) => {
  t.equal(limitsOf({ minimum: 1 }), '≥ 1')
  t.equal(limitsOf({ maximum: 9 }), '≤ 9')
  t.equal(limitsOf({ exclusiveMinimum: 0 }), '≥ 0 (exclusive)')
  t.equal(limitsOf({ minLength: 1, maxLength: 5, pattern: '^[a`z]+$' }), "1–5 chars; matches `^[a'z]+$`")
  t.equal(limitsOf({ items: { maxLength: 3 }, maxItems: 2 }), '≤ 2 items; each ≤ 3 chars')
  t.equal(limitsOf({ items: { type: 'object', properties: { a: { type: 'string' } }, minProperties: 1 } }), '', 'object items get their own rows, not an "each" cell')
})

t.test('parameter table: untyped and array-of-untyped parameters, nested objects and arrays of objects, non-schema properties', async (t) => {
  const table = parameterTable({
    type: 'object',
    required: ['files'],
    properties: {
      anything: { description: 'No type given' },
      list: { type: 'array', description: 'Items of any type' },
      odd: 7,
      files: { type: 'array', description: 'Files', items: { type: 'object', required: ['path'], properties: { path: { type: 'string', description: 'Path | with a pipe' }, extra: 5 } } },
      options: { type: 'object', description: 'Options', properties: { wrap: { type: 'boolean', default: false } } }
    }
  })

  t.match(table, /\| `anything` \| any \| — \|/)
  t.match(table, /\| `list` \| any\[\] \| — \|/)
  t.notMatch(table, /`odd`|`files\[\]\.extra`/)
  t.match(table, /\| `files` \| object\[\] \| \*\*required\*\* \|/)
  t.match(table, /\| `files\[\]\.path` \| string \| \*\*required\*\* \| {2}\| Path \\\| with a pipe \|/)
  t.match(table, /\| `options\.wrap` \| boolean \| `false` \| {2}\| {2}\|/, 'a nested property without a description renders an empty cell')
  t.match(parameterTable({ type: 'object' }), /No parameters/)
})

t.test('sections: the fixed categories first, unknown ones after; a tool without docs says its description is pending', async (t) => {
  const entries = [entry({ name: 'do_magic', title: 'Magic', category: 'wizardry' }), entry({})]
  const text = renderSections(entries, new Map(), { includeExamples: true })

  t.ok(text.indexOf('## ') === text.indexOf('## Read'), 'the read category comes first')
  t.match(text, /## wizardry \(1 tool\)\n\n### do_magic — Magic\n\nRead notes\. More detail here\.\n\n\[Description pending\]/)
  t.equal(renderIndex([entry({ description: 'No sentence end here' })]), '- `read_notes` (read) — No sentence end here')
})
