import t, { type Test } from 'tap'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Type, type TObject } from '@sinclair/typebox'
import { createRegistry } from '../src/mcp/registry/registry.js'
import { defineTool, textResult, type AnyTool, type ToolDefinition } from '../src/tool-api/define-tool.js'
import { bootLint, checkBudget, firstSentence, lintConventions, RULES, TOOL_TOKEN_ALLOWANCE, type Violation } from '../src/guide/conventions.js'
import pino from 'pino'
import { createTokenizer } from '../src/services/tokenizer/tokenizer.js'
import { parseOverlay } from '../src/guide/overlay.js'
import { createRuntime } from '../src/runtime.js'
import { loadConfig } from '../src/base/config.js'
import { tools as productTools } from '../src/tool-list.js'
import { runCli } from './helpers/cli.js'

// The conventions are enforced by code: each rule gets a tool that breaks it (and only it).

const ROOT = fileURLToPath(new URL('..', import.meta.url))

const good = {
  name: 'read_notes',
  title: 'Read Notes',
  category: 'read',
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  description: 'Read one or more notes with line numbers — pass several in `paths` to read them in one call.\n\nUse list_notes first to see which notes exist.',
  input: Type.Object({
    paths: Type.Array(Type.String(), { minItems: 1, maxItems: 20, description: 'Notes to read, e.g. ["todo.md", "ideas.md"]' }),
    verbose: Type.Optional(Type.Boolean({ default: false, description: 'Also show each note\'s metadata header' }))
  }),
  run: () => textResult('ok')
} satisfies ToolDefinition<TObject>

const lister = defineTool({
  ...good,
  name: 'list_notes',
  title: 'List Notes',
  category: 'navigation',
  description: 'List the notes in the notebook, newest first.\n\nRead them with read_notes.',
  input: Type.Object({ folder: Type.Optional(Type.String({ description: 'Notebook folder to list, e.g. "work"' })) })
})

function tool (patch: Partial<ToolDefinition<TObject>>): AnyTool {
  return { ...good, ...patch } as AnyTool
}

function violations (tools: AnyTool[]): Violation[] {
  const registry = createRegistry({ tools, services: {} })
  return lintConventions(registry.services.catalog?.entries() ?? [])
}

const rulesOf = (list: Violation[]): number[] => [...new Set(list.map(v => v.rule.id))]

t.test('a conforming pair of tools has no violations', async (t) => {
  t.same(violations([good, lister]), [])
})

t.test('rule 1: singular + plural twins on one tool are a violation', async (t) => {
  const twins = tool({
    input: Type.Object({
      path: Type.Optional(Type.String({ description: 'One note to read, e.g. "todo.md"' })),
      paths: Type.Array(Type.String(), { description: 'Notes to read, e.g. ["todo.md"]' })
    })
  })

  const found = violations([twins, lister])

  t.same(rulesOf(found), [RULES.batch.id])
  t.match(found[0], { tool: 'read_notes', message: /'path' and 'paths'/ })
})

t.test('rule 1: two batch list fields on one tool are a violation', async (t) => {
  const two = tool({
    description: 'Read notes matching globs or paths — pass several in `paths` or `patterns` in one call.\n\nSee list_notes.',
    input: Type.Object({
      paths: Type.Array(Type.String(), { description: 'Notes to read, e.g. ["todo.md"]' }),
      patterns: Type.Array(Type.String(), { description: 'Globs of notes, e.g. ["*.md"]' })
    })
  })

  t.same(rulesOf(violations([two, lister])), [RULES.batch.id])
})

t.test('rule 2: a first sentence over 200 characters is a violation', async (t) => {
  const long = tool({ description: `Read one or more notes with line numbers and ${'very '.repeat(40)}long prose — pass several in \`paths\`.\n\nSee list_notes.` })

  const found = violations([long, lister])

  t.same(rulesOf(found), [RULES.firstSentence.id])
  t.match(found[0].message, /first sentence is \d+ characters/)
})

t.test('rule 2: a first sentence that does not start with what the tool does is a violation', async (t) => {
  const vague = tool({ description: 'This tool reads notes — pass several in `paths`.\n\nSee list_notes.' })

  t.same(rulesOf(violations([vague, lister])), [RULES.firstSentence.id])
})

t.test('rule 2: a batch tool whose first sentence does not say how to batch is a violation', async (t) => {
  const silent = tool({ description: 'Read notes with line numbers. Several paths may be given.\n\nSee list_notes.' })

  const found = violations([silent, lister])

  t.same(rulesOf(found), [RULES.firstSentence.id])
  t.match(found[0].message, /`paths`/)
})

t.test('rule 3: a get_* tool that does not name its list partner in the second paragraph is a violation', async (t) => {
  const getter = defineTool({
    ...good,
    name: 'get_note',
    title: 'Get Note',
    description: 'Get one note with its metadata.\n\nReturns the whole note.',
    input: Type.Object({ name: Type.String({ description: 'Note name, e.g. "todo.md"' }) })
  })
  const fixed = { ...getter, description: 'Get one note with its metadata.\n\nTo see every note, use list_notes.' }

  t.same(rulesOf(violations([getter, lister])), [RULES.partner.id])
  t.same(violations([fixed, lister]), [])
})

t.test('rule 4: a parameter description without an example value is a violation', async (t) => {
  const bare = tool({
    input: Type.Object({
      paths: Type.Array(Type.String(), { description: 'Notes to read, e.g. ["todo.md"]' }),
      limit: Type.Optional(Type.Integer({ description: 'The largest number of lines to show' }))
    })
  })

  const found = violations([bare, lister])

  t.same(rulesOf(found), [RULES.params.id])
  t.match(found[0].message, /'limit'.*no example/)
})

t.test('rule 4: descriptions shorter than 20 or longer than 1,000 characters are violations', async (t) => {
  const short = tool({
    input: Type.Object({ paths: Type.Array(Type.String(), { description: 'e.g. ["a"]' }) })
  })
  const long = tool({ description: 'Read notes — pass several in `paths` to read them in one call.\n\n' + 'See list_notes. '.repeat(70) })

  t.same(rulesOf(violations([short, lister])), [RULES.params.id])
  t.same(rulesOf(violations([long, lister])), [RULES.params.id])
})

t.test('rule 5: a tool whose tools/list entry is over the per-tool allowance is a violation naming it', async (t) => {
  // Forty well-described parameters: every other rule holds, only the entry's size is wrong.
  const params = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [
    `filter_${i}`,
    Type.Optional(Type.String({ description: `Only notes whose field number ${i} matches this text, compared without case, e.g. "draft"` }))
  ]))
  const bloated = defineTool({ ...lister, input: Type.Object(params) })
  const registry = createRegistry({ tools: [bloated, good], services: {} })
  const catalog = registry.services.catalog
  if (catalog === undefined) throw new Error('no catalog')

  const tokenizer = createTokenizer()
  t.teardown(() => tokenizer.close())

  const report = await checkBudget(catalog.manifestJson(), tokenizer)

  t.same(lintConventions(catalog.entries()), [], 'only rule 5 is broken')
  t.ok(report.toolTokens.list_notes > TOOL_TOKEN_ALLOWANCE)
  t.ok(report.toolTokens.read_notes < TOOL_TOKEN_ALLOWANCE)
  t.equal(report.budget, TOOL_TOKEN_ALLOWANCE * 2, 'the whole list may cost the allowance per tool')
  t.same(rulesOf(report.violations), [RULES.budget.id])
  t.same(report.violations.map(v => v.tool), ['list_notes'], 'only the oversized tool is named')
  t.match(report.violations[0].message, new RegExp(`is ${report.toolTokens.list_notes} tokens, over the ${TOOL_TOKEN_ALLOWANCE}-token allowance per tool`))
})

t.test('rule 5: adding tools within the allowance never breaks it, however many there are', async (t) => {
  // The 40 tools together cost more than the old fixed 3,500-token budget for the whole list.
  const many = Array.from({ length: 40 }, (_, i) => defineTool({
    ...lister,
    name: `list_notes_${i}`,
    description: `List the notes of notebook ${i}, newest first.\n\n${'Each entry shows the title, the size, the tags and the date it was last changed. '.repeat(8)}`
  }))
  const registry = createRegistry({ tools: many, services: {} })
  const catalog = registry.services.catalog
  if (catalog === undefined) throw new Error('no catalog')

  const tokenizer = createTokenizer()
  t.teardown(() => tokenizer.close())

  const report = await checkBudget(catalog.manifestJson(), tokenizer)

  t.ok(report.tokens > 3500)
  t.ok(report.tokens <= report.budget)
  t.same(report.violations, [])
})

t.test('rule 6: names that are not snake_case or not verb-first, and missing titles or annotations, are violations', async (t) => {
  const noun = tool({ name: 'notes_reader' })
  const camel = tool({ input: Type.Object({ paths: Type.Array(Type.String(), { description: 'Notes to read, e.g. ["todo.md"]' }), maxLines: Type.Optional(Type.Integer({ description: 'Lines per note, e.g. 100' })) }) })
  const untitled = tool({ title: '' })
  const bare = tool({ annotations: {} })

  for (const [label, bad] of [['verb first', noun], ['snake_case parameter', camel], ['title', untitled], ['annotations', bare]] as const) {
    t.same(rulesOf(violations([bad, lister])), [RULES.naming.id], label)
  }
})

t.test('the boot lint turns violations into a registry boot error naming tool and rule', async (t) => {
  const bad = tool({ description: 'This tool reads notes — pass several in `paths`.\n\nSee list_notes.' })

  t.throws(() => createRegistry({ tools: [bad, lister], services: {}, lint: bootLint }), {
    code: 'APP_ERR_TOOL_DEFINITION',
    message: /read_notes: rule 2 \(first-sentence\)/
  })
})

t.test('tools served beside the product\'s (a test entry\'s extras) are not linted at boot; the product\'s are', async (t) => {
  const fixture = tool({ name: 'echo', category: 'guide', description: 'Echo.' })
  t.ok(lintConventions(createRegistry({ tools: [fixture], services: {} }).services.catalog?.entries() ?? []).length > 0, 'the fixture breaks the conventions')
  const runtime = await createRuntime(loadConfig({ root: fileURLToPath(new URL('./fixtures/symbols', import.meta.url)), codeIndex: 'off' }, {}), pino({ level: 'silent' }), { extras: { tools: [fixture] } })
  t.teardown(() => runtime.close())
  t.ok(runtime.registry.tools.some(entry => entry.wire.name === 'echo'), 'yet it is served')
  t.ok(runtime.registry.tools.some(entry => entry.wire.name === 'read_files'), 'beside the product\'s tools, which passed the lint')
})

t.test('first sentences end at . ! ? followed by space, never inside e.g.', async (t) => {
  t.equal(firstSentence('Read files, e.g. src/app.ts, quickly. More.'), 'Read files, e.g. src/app.ts, quickly.')
  t.equal(firstSentence('No stop at all'), 'No stop at all')
})

t.test('the shipped tools pass every convention, including the token budget', async (t) => {
  // With an embeddings provider configured, so search_semantic is listed and checked too.
  const runtime = await createRuntime(loadConfig({ root: ROOT, embeddingsUrl: 'http://127.0.0.1:9/v1', embeddingsModel: 'm' }), pino({ level: 'silent' }), { lint: false })
  const catalog = runtime.registry.services.catalog
  if (catalog === undefined) throw new Error('no catalog')
  const tokenizer = runtime.services.tokenizer ?? createTokenizer()
  t.teardown(() => tokenizer.close())
  t.same(Object.keys(runtime.registry.unavailable), [], 'every product tool is listed')
  t.equal(catalog.entries().length, productTools.length)

  const budget = await checkBudget(catalog.manifestJson(), tokenizer)
  const found = [...lintConventions(catalog.entries()), ...budget.violations]

  t.same(found.map(v => `${v.tool}: rule ${v.rule.id}: ${v.message}`), [])
  t.comment(`tools/list: ${budget.tokens} tokens (${budget.budget} budget); per tool (allowance ${TOOL_TOKEN_ALLOWANCE}): ${JSON.stringify(budget.toolTokens)}`)
})

t.test('docs/tools.yaml names only shipped tools: every entry and see-also (an entry itself is optional)', async (t) => {
  const overlay = parseOverlay(readFileSync(join(ROOT, 'docs', 'tools.yaml'), 'utf8'))
  const shipped = new Set(productTools.map(tool => tool.name))

  t.same(overlay.problems, [])
  t.same(Object.keys(overlay.tools).filter(name => !shipped.has(name)), [], 'no entry for an unknown tool')
  for (const [name, entry] of Object.entries(overlay.tools)) {
    t.same((entry.see_also ?? []).filter(other => !shipped.has(other)), [], `${name} see_also`)
  }
})

t.test('`workspace-mcp check` passes on the shipped tools and docs', async (t) => {
  const run = await runCli(['check'])

  t.equal(run.status, 0, run.stdout + run.stderr)
  t.match(run.stdout, /check passed/)
  t.match(run.stdout, /get_tool_usage_guide\s+Complete/)
})

/** Runs `workspace-mcp check` against an overlay holding `text` (in a test dir tap removes); returns the run and the file. */
async function checkWithOverlay (t: Test, text: string) {
  const docs = join(t.testdir({ 'tools.yaml': text }), 'tools.yaml')
  return { docs, run: await runCli(['check', '--docs-file', docs]) }
}

t.test('`workspace-mcp check` fails with one line per violation when an example no longer fits its schema', async (t) => {
  const { run } = await checkWithOverlay(t, 'tools:\n  get_tool_usage_guide:\n    description: The guide.\n    returns: Markdown.\n    examples:\n      - comment: Stale\n        arguments: { "tool_name": "read_files" }\n')

  t.equal(run.status, 1)
  t.match(run.stdout, /^get_tool_usage_guide: rule 7 \(docs-complete\): overlay example 1 \("Stale"\) does not fit the input schema/m)
  t.match(run.stdout, /^get_tool_usage_guide: rule 7 \(docs-complete\): is Documented/m)
  t.match(run.stdout, /^ {2}list_directory\s+SchemaOnly/m, 'a tool without an entry is listed as SchemaOnly')
  t.notMatch(run.stdout, /^list_directory:/m, '… and is not a violation: the entry is optional')
  t.match(run.stdout, /check failed: 2 violations/)
})

t.test('`workspace-mcp check` with a bad flag is a usage error (exit 2)', async (t) => {
  const run = await runCli(['check', '--no-such-flag'])

  t.equal(run.status, 2)
  t.equal(run.stdout, '')
})
