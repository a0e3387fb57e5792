// Overlay entries checked against the registry: examples that do not fit the schema or are too long,
// too many examples, unknown error codes, entries for tools that are not registered, a corrupt file.
import t from 'tap'
import { Type } from '@sinclair/typebox'
import { exampleJson, resolveDocs } from '../../src/guide/docs.js'
import type { Overlay } from '../../src/guide/overlay.js'
import { compileArguments } from '../../src/mcp/registry/validate.js'
import type { CatalogEntry } from '../../src/services/catalog.js'

const validator = compileArguments(Type.Object({ path: Type.String({ description: 'A path, e.g. "a"' }), tags: Type.Optional(Type.Array(Type.String(), { description: 'Tags, e.g. ["x"]' })) }), new Set())
const entry: CatalogEntry = {
  name: 'read_notes',
  title: 'Read Notes',
  category: 'read',
  description: 'Read notes. See list_notes.',
  inputSchema: { type: 'object', properties: {} },
  annotations: { readOnlyHint: true },
  examples: [{ comment: 'one note', arguments: { path: 'a' } }],
  validate: (args) => { const r = validator(args); return r.ok ? [] : [r.message] }
}
const overlay = (tools: Overlay['tools'], extra: Partial<Overlay> = {}): Overlay => ({ version: '1', status: 'ok', file: 'docs/tools.yaml', tools, problems: [], ...extra })

t.test('examples that do not fit, that are too long, or that are too many are dropped and reported', async (t) => {
  const long = { path: 'a', tags: Array.from({ length: 40 }, (_, i) => `tag-number-${i}`) }
  const many = Array.from({ length: 8 }, (_, i) => ({ comment: `example ${i}`, arguments: { path: `p${i}` } }))
  const { tools, problems } = resolveDocs([entry], overlay({
    read_notes: { description: 'Docs.', returns: 'Text.', examples: [{ comment: 'bad', arguments: { nope: 1 } }, { comment: 'long', arguments: long }, ...many], errors: ['PATH_NOT_FOUND', 'MADE_UP'] }
  }))
  const messages = problems.map(p => p.message).join('\n')

  t.match(messages, /overlay example 1 \("bad"\) does not fit the input schema: nope: unknown argument/)
  t.match(messages, /overlay example 2 \("long"\) is \d+ lines of JSON; keep it to \d+/)
  t.match(messages, /9 examples; keep the \d+ most useful/)
  t.match(messages, /error code 'MADE_UP' is not in TOOL_ERROR_CODES/)
  const docs = tools.get('read_notes')!
  t.strictSame(docs.errors, ['PATH_NOT_FOUND'])
  t.equal(docs.state, 'Complete')
  t.ok(exampleJson(long).includes('\n'), 'long examples are shown indented')
})

t.test('entries for unregistered tools and a corrupt overlay are problems; a description without returns is Documented', async (t) => {
  const unknown = resolveDocs([entry], overlay({ list_nothing: { description: 'x' }, read_notes: { description: 'Docs only.' } }))
  t.match(unknown.problems, [{ tool: 'list_nothing', message: /overlay entry for a tool that is not registered/ }])
  t.equal(unknown.tools.get('read_notes')!.state, 'Documented')
  const gated = resolveDocs([entry], overlay({ list_nothing: { description: 'x' }, git_log: { description: 'x' } }), ['git_log'])
  t.same(gated.problems.map(p => p.tool), ['list_nothing'], 'a defined tool without its service keeps its entry; a typo is still a problem')
  const shaped = resolveDocs([entry], overlay({}, { problems: ['read_notes.examples[0]: needs a \'comment\''] }))
  t.match(shaped.problems, [{ tool: 'read_notes' }], 'a shape problem is filed under the tool it names')

  const corrupt = resolveDocs([entry], overlay({}, { status: 'corrupt', problems: ['docs/tools.yaml: bad indentation'] }))
  t.match(corrupt.problems, [{ tool: '(overlay)', message: 'docs/tools.yaml: bad indentation' }])
  t.equal(corrupt.tools.get('read_notes')!.state, 'SchemaOnly')
})

t.test('instructions: budgets without a default or maximum, batch fields without a bound, an empty catalog', async (t) => {
  const { generateInstructions } = await import('../../src/guide/instructions.js')
  const loose: CatalogEntry = {
    ...entry,
    name: 'read_items',
    inputSchema: { type: 'object', properties: { max_response_tokens: { type: 'integer' }, paths: { type: 'array', items: { type: 'string' } } } }
  }
  const text = generateInstructions([loose])

  t.match(text, /read_items answers within max_response_tokens \(default \?\)/)
  t.notMatch(text, /takes up to/, 'an unbounded batch field states no bound')
  t.match(generateInstructions([]), /^Read-only access to one workspace/)
  t.notMatch(generateInstructions([]), /Tools by category|Start with/)
})

t.test('the help resources need the catalog and the guide; without them they answer not found', async (t) => {
  const { helpResource, helpTemplate } = await import('../../src/guide/help-resources.js')
  const ctx = { services: {}, signal: new AbortController().signal }
  t.throws(() => helpResource().read(ctx), /workspace:\/\/help/)
  await t.rejects(async () => await helpTemplate().read('workspace://help/read_files', { tool: 'read_files' }, ctx), /workspace:\/\/help/)
})
