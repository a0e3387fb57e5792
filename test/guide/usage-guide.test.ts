import t from 'tap'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Type } from '@sinclair/typebox'
import { createRegistry } from '../../src/mcp/registry/registry.js'
import { createMcpServer } from '../../src/mcp/server.js'
import { defineTool, Inject, textResult, type AnyTool } from '../../src/tool-api/define-tool.js'
import { getToolUsageGuide } from '../../src/tools/get-tool-usage-guide.js'
import { createUsageGuide, GUIDE_MAX_BYTES } from '../../src/guide/usage-guide.js'
import type { ToolCatalog } from '../../src/services/catalog.js'
import { captureLogger, initializedSession } from '../helpers/engine.js'

const dir = mkdtempSync(join(tmpdir(), 'wmcp-guide-'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))

const annotations = { readOnlyHint: true, idempotentHint: true, openWorldHint: false }
const sample: AnyTool[] = [
  defineTool({
    name: 'read_notes',
    title: 'Read Notes',
    category: 'read',
    annotations,
    description: 'Read notes with line numbers — pass several in `files` to read them in one call.',
    input: Type.Object({
      files: Type.Array(Type.Object({
        path: Type.String({ minLength: 1, description: 'Note path, e.g. "todo.md"' }),
        start_line: Type.Optional(Type.Integer({ minimum: 1, default: 1, description: 'First line, e.g. 10' }))
      }), { minItems: 1, maxItems: 20, description: 'Notes to read, e.g. [{"path": "todo.md"}]' }),
      mode: Type.Optional(Type.Union([Type.Literal('plain'), Type.Literal('numbered')], { default: 'numbered', description: 'Line style, e.g. "plain"' })),
      clock: Inject('clock')
    }),
    run: () => textResult('ok')
  }),
  defineTool({
    name: 'list_notes',
    title: 'List Notes',
    category: 'navigation',
    annotations,
    description: 'List the notes in the notebook, newest first; read them with read_notes.',
    input: Type.Object({}),
    run: () => textResult('ok')
  })
]

const OVERLAY = `tools:
  read_notes:
    description: Reads notes. A longer explanation.
    returns: Numbered lines per note.
    errors: [PATH_NOT_FOUND, NOT_A_CODE]
    see_also: [list_notes, nobody]
    examples:
      - comment: Two notes
        arguments: { "files": [{ "path": "a.md" }, { "path": "b.md", "start_line": 5 }] }
      - comment: Stale
        arguments: { "file": "a.md" }
`

function setup (overlay = OVERLAY, tools = sample) {
  const file = join(dir, `tools-${Math.random().toString(36).slice(2)}.yaml`)
  writeFileSync(file, overlay)
  const { log, lines } = captureLogger()
  const registry = createRegistry({ tools, services: { clock: { now: () => 0 } } })
  const catalog = registry.services.catalog as ToolCatalog
  const guide = createUsageGuide({ docsFile: file, log })
  return { file, catalog, guide, lines }
}

t.test('renders a header, then categories in fixed order with counts, then each tool', async (t) => {
  const { catalog, guide } = setup()

  const out = guide.render(catalog, {}, Date.UTC(2026, 0, 2, 3, 4, 5))

  t.match(out.text, /^# Tool usage guide\n\nGenerated 2026-01-02T03:04:05\.000Z · 2 of 2 tools · filter: none\n/)
  t.ok(out.text.indexOf('## Navigation (1 tool)') < out.text.indexOf('## Read (1 tool)'), 'navigation before read')
  t.match(out.text, /### read_notes — Read Notes\n\nReads notes\. A longer explanation\./)
  t.match(out.text, /\*\*Returns:\*\* Numbered lines per note\./)
  t.match(out.text, /\*\*Errors:\*\* `PATH_NOT_FOUND`\n/)
  t.match(out.text, /\*\*See also:\*\* `list_notes`/)
  t.same(out.warnings, [])
  t.match(out.metadata, { total_tools: 2, filtered_count: 2, invalid_names: [] })
  t.type(out.metadata.generation_time_ms, 'number', 'the time is reported (its size is the benchmark\'s)')
})

t.test('the parameter table comes from the published schema: types, defaults, limits, nested items; no injected services', async (t) => {
  const { catalog, guide } = setup()

  const text = guide.render(catalog, { tool_names: ['read_notes'] }).text

  t.match(text, /\| `files` \| object\[\] \| \*\*required\*\* \| 1–20 items \| Notes to read/)
  t.match(text, /\| `files\[\]\.path` \| string \| \*\*required\*\* \| ≥ 1 chars \|/)
  t.match(text, /\| `files\[\]\.start_line` \| integer \| `1` \| ≥ 1 \|/)
  t.match(text, /\| `mode` \| string \| `"numbered"` \| one of `plain`, `numbered` \|/)
  t.notMatch(text, /clock/)
})

t.test('examples that do not fit the schema are dropped and logged; bad codes and names are reported', async (t) => {
  const { catalog, guide, lines } = setup()

  const docs = guide.docs(catalog)
  const text = guide.render(catalog, {}).text

  t.match(text, /Two notes:/)
  t.notMatch(text, /Stale/)
  t.equal(docs.tools.get('read_notes')?.examples.length, 1)
  const messages = docs.problems.map(p => p.message).join('\n')
  t.match(messages, /overlay example 2 \("Stale"\) does not fit the input schema/)
  t.match(messages, /'NOT_A_CODE' is not in TOOL_ERROR_CODES/)
  t.notMatch(messages, /nobody/, 'an unlisted see-also target is left out quietly')
  t.ok(lines.some(l => l.level === 50 && /Stale/.test(String(l.msg))), 'logged at error level')
})

t.test('documentation states: SchemaOnly shows [Description pending], Documented, Complete', async (t) => {
  const { catalog, guide } = setup('tools:\n  list_notes:\n    description: Lists.\n')

  const docs = guide.docs(catalog)
  const text = guide.render(catalog, {}).text

  t.equal(docs.tools.get('read_notes')?.state, 'SchemaOnly')
  t.equal(docs.tools.get('list_notes')?.state, 'Documented')
  t.match(text, /Read notes with line numbers[^\n]*\n\n\[Description pending\]/)
  t.equal(setup().guide.docs(setup().catalog).tools.get('read_notes')?.state, 'Complete')
})

t.test('unknown names are warnings and the rest of the guide is still returned', async (t) => {
  const { catalog, guide } = setup()

  const out = guide.render(catalog, { tool_names: ['list_notes', 'nonexistent'] })

  t.same(out.warnings, ["Tool 'nonexistent' not found. Available: read_notes, list_notes"])
  t.match(out.metadata, { total_tools: 2, filtered_count: 1, invalid_names: ['nonexistent'] })
  t.match(out.text, /### list_notes/)
  t.notMatch(out.text, /### read_notes/)
})

t.test('category and include_examples filter the guide', async (t) => {
  const { catalog, guide } = setup()

  const read = guide.render(catalog, { category: 'read', include_examples: false }).text

  t.match(read, /filter: category=read include_examples=false/)
  t.notMatch(read, /## Navigation/)
  t.notMatch(read, /\*\*Examples\*\*/)
})

t.test('an edited overlay shows up on the next render', async (t) => {
  const { catalog, guide, file } = setup()
  const before = guide.render(catalog, {}).text

  writeFileSync(file, OVERLAY.replace('A longer explanation.', 'Edited while running, longer now.'))
  const after = guide.render(catalog, {}).text

  t.match(before, /A longer explanation/)
  t.match(after, /Edited while running, longer now/)
})

t.test('a guide over 50 KB becomes an index that names the filter to use', async (t) => {
  const many = Array.from({ length: 60 }, (_, i): AnyTool => ({ ...sample[1], name: `list_notes_${i}` }))
  const overlay = 'tools:\n' + many.map(m => `  ${m.name}:\n    description: ${'Long prose about notes. '.repeat(50)}\n`).join('')
  const { catalog, guide } = setup(overlay, many)

  const out = guide.render(catalog, {})

  t.ok(out.truncated)
  t.ok(Buffer.byteLength(out.text) <= GUIDE_MAX_BYTES)
  t.match(out.text, /The full guide is \d+ KB, over the 50 KB limit/)
  t.match(out.text, /`category`.*`tool_names`/)
  t.match(out.text, /- `list_notes_59` \(navigation\)/)
  const plain = guide.render(catalog, { include_examples: false })
  t.match(plain.text, /`tool_names` \(a few names from the index below\)\.\n/, 'without examples it does not suggest dropping them')
  t.equal(guide.overlay().status, 'ok')

  // More distinct filters than the body cache holds: the oldest bodies make room, answers stay right.
  for (let i = 0; i < 70; i++) {
    const one = guide.render(catalog, { tool_names: [`list_notes_${i % 60}`, `list_notes_${(i + 1 + Math.floor(i / 60)) % 60}`] })
    if (i === 69) t.match(one.text, /### list_notes_9 —.*### list_notes_11 —/s)
  }
  t.match(guide.render(catalog, { tool_names: ['list_notes_0', 'list_notes_1'] }).text, /### list_notes_0 —.*### list_notes_1 —/s, 'an evicted body is rendered again')
  t.match(guide.render(catalog, { category: 'search' }).text, /_No tools match this filter\._/)
})

t.test('get_tool_usage_guide over the engine returns the guide and structuredContent with metadata', async (t) => {
  const { log } = captureLogger()
  const { file } = setup()
  const registry = createRegistry({
    tools: [...sample, getToolUsageGuide],
    services: { clock: { now: () => 0 }, guide: createUsageGuide({ docsFile: file }) }
  })
  const server = createMcpServer({ registry, log, info: { name: 't', version: '0' } })
  const { call } = await initializedSession({ registry, server, log, lines: [] })

  const res = await call('tools/call', { name: 'get_tool_usage_guide', arguments: { tool_names: ['read_notes', 'nonexistent'] } })

  t.notOk(res.result.isError)
  t.match(res.result.content[0].text, /Generated 1970-01-01T00:00:00\.000Z · 1 of 3 tools/)
  t.match(res.result.structuredContent, {
    warnings: [/Tool 'nonexistent' not found/],
    metadata: { total_tools: 3, filtered_count: 1, invalid_names: ['nonexistent'] }
  })
  const bad = await call('tools/call', { name: 'get_tool_usage_guide', arguments: { category: 'everything' } })
  t.equal(bad.result.isError, true, 'a category outside the enum is an argument error')
})
