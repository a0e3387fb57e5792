import t from 'tap'
import { Type } from '@sinclair/typebox'
import { createRegistry } from '../../src/mcp/registry/registry.js'
import { toolError } from '../../src/base/errors.js'
import { defineTool, textResult, type AnyTool } from '../../src/tool-api/define-tool.js'
import { testTools } from '../helpers/engine.js'
import { systemClock } from '../../src/services/clock.js'

const many = (n: number) => Array.from({ length: n }, (_, i) => defineTool({
  name: `tool_${i}`,
  title: `Tool ${i}`,
  category: 'guide',
  description: `Synthetic tool number ${i} for pagination.`,
  annotations: { readOnlyHint: true },
  input: Type.Object({ q: Type.Optional(Type.String({ description: 'Query, e.g. "x"' })) }),
  run: () => textResult('ok')
}))

t.test('tools/list pages follow opaque cursors and cover every tool exactly once', async (t) => {
  const registry = createRegistry({ tools: many(25), services: {}, pageSize: 10 })

  const names: string[] = []
  let cursor: string | undefined
  let pages = 0
  do {
    const page = JSON.parse(registry.toolsListPage(cursor))
    names.push(...page.tools.map((x: { name: string }) => x.name))
    cursor = page.nextCursor
    pages++
  } while (cursor !== undefined && pages < 10)

  t.equal(pages, 3)
  t.strictSame(names, many(25).map(x => x.name))
  t.throws(() => registry.toolsListPage('bogus'), { code: 'APP_ERR_INVALID_PARAMS' })
})

t.test('the serialized page is computed once, at registration: serving it reads no definition again', async (t) => {
  // Every read of a definition's description, and of a registered tool's wire form, is counted: a page built at
  // request time would read them again.
  let reads = 0
  const tools = testTools.map(tool => Object.defineProperty({ ...tool }, 'description', { get () { reads++; return tool.description }, enumerable: true }))
  const registry = createRegistry({ tools, services: { clock: systemClock } })
  const wires = registry.tools.map(tool => tool.wire)
  registry.tools.forEach((tool, i) => Object.defineProperty(tool, 'wire', { get () { reads++; return wires[i] }, configurable: true }))
  t.ok(reads > 0, 'the definitions were read at registration')
  reads = 0

  const first = registry.toolsListPage(undefined)
  const again = registry.toolsListPage(undefined)
  const manifest = registry.services.catalog!.manifestJson()
  t.equal(reads, 0, 'two pages and the manifest served without reading a definition or a registered tool')
  t.equal(again, first)
  t.same(JSON.parse(first).tools, wires, 'the page holds the registered tools as they were at registration')
  t.same(JSON.parse(manifest), wires, 'so does the manifest')
})

t.test('a duplicate tool name stops startup', async (t) => {
  t.throws(() => createRegistry({ tools: [...many(2), ...many(1)], services: {} }), { code: 'APP_ERR_TOOL_DUPLICATE' })
})

t.test('a schema the compatibility check rejects stops startup, naming the tool and the JSON path', async (t) => {
  const bad = defineTool({
    name: 'bad_tool',
    title: 'Bad',
    category: 'guide',
    description: 'Has a parameter with no description.',
    annotations: {},
    input: Type.Object({ a: Type.Union([Type.String(), Type.Number()], { description: 'mixed, e.g. 1' }), b: Type.String() }),
    run: () => textResult('')
  })

  t.throws(() => createRegistry({ tools: [bad], services: {} }), {
    code: 'APP_ERR_SCHEMA_INCOMPATIBLE',
    message: /bad_tool\.inputSchema\.properties\.a: uses 'anyOf'.*bad_tool\.inputSchema\.properties\.b: property has no 'description'/
  })
})

t.test('a tool name outside ^[a-z][a-z0-9_]{0,63}$ stops startup', async (t) => {
  const [tool] = many(1)
  t.throws(() => createRegistry({ tools: [{ ...tool, name: 'read.file' }], services: {} }), { code: 'APP_ERR_SCHEMA_INCOMPATIBLE', message: /read\.file: name must match/ })
})

t.test('lint problems stop startup', async (t) => {
  t.throws(() => createRegistry({ tools: many(1), services: {}, lint: () => ['tool_0: rule 2: too long'] }), { code: 'APP_ERR_TOOL_DEFINITION', message: /rule 2/ })
})

t.test('a definition without name, input or run, and duplicate resources or prompts, are refused at startup', async (t) => {
  t.throws(() => createRegistry({ tools: [{ name: 'x' } as unknown as AnyTool], services: {} }), /x: needs name, input and run/)
  const resource = { uri: 'test://a', name: 'a', read: () => [] }
  t.throws(() => createRegistry({ tools: [], services: {}, resources: [resource, { ...resource }] }), /test:\/\/a/)
  const prompt = { name: 'p', get: () => ({ messages: [] }) }
  t.throws(() => createRegistry({ tools: [], services: {}, prompts: [prompt, { ...prompt }] }), /\bp\b/)
})

const withInput = (name: string, input: ReturnType<typeof Type.Object>, extra: Partial<AnyTool> = {}): AnyTool => ({
  name, title: name, category: 'guide', description: 'A tool for registry checks.', annotations: {}, input, run: () => textResult('ok'), ...extra
})

t.test('x-mcp-header: a header-name token on a primitive top-level parameter, once per tool', async (t) => {
  const desc = { description: 'A value, e.g. "x"' }
  const ok = createRegistry({ tools: [withInput('good', Type.Object({ a: Type.String({ 'x-mcp-header': 'Region', ...desc }), b: Type.Optional(Type.Boolean({ 'x-mcp-header': 'Dry-Run', ...desc })) }))], services: {} })
  t.same(ok.tool('good')!.headers, [{ param: 'a', header: 'Region', type: 'string' }, { param: 'b', header: 'Dry-Run', type: 'boolean' }])
  const refused: Array<[string, ReturnType<typeof Type.Object>]> = [
    ['a space in the name', Type.Object({ a: Type.String({ 'x-mcp-header': 'My Region', ...desc }) })],
    ['not a string', Type.Object({ a: Type.String({ 'x-mcp-header': 7, ...desc }) })],
    ['an array parameter', Type.Object({ a: Type.Array(Type.String(), { 'x-mcp-header': 'List', ...desc }) })],
    ['the same header twice', Type.Object({ a: Type.String({ 'x-mcp-header': 'Region', ...desc }), b: Type.String({ 'x-mcp-header': 'region', ...desc }) })]
  ]
  for (const [label, input] of refused) {
    t.throws(() => createRegistry({ tools: [withInput('bad', input)], services: {} }), { code: 'APP_ERR_TOOL_DEFINITION', message: /bad: .*x-mcp-header/ }, label)
  }
})

t.test('as written: kept exactly, checked against the 2020-12 meta-schema, no injected services', async (t) => {
  const input = Type.Object({ n: Type.Integer() }, { $schema: 'https://json-schema.org/draft/2020-12/schema', minProperties: 1 })
  const registry = createRegistry({ tools: [withInput('written', input, { publishInput: 'as-written' })], services: {} })
  const tool = registry.tool('written')!
  t.same(tool.wire.inputSchema, { $schema: 'https://json-schema.org/draft/2020-12/schema', minProperties: 1, type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] })
  t.same(tool.validate({ n: 2 }), { ok: true, value: { n: 2 } })
  t.same(tool.validate(null), { ok: false, unknown: false, message: 'arguments: must NOT have fewer than 1 properties' }, 'null arguments are an empty object')
  t.same(tool.validate({ n: 'x' }), { ok: false, unknown: false, message: 'n: must be integer' })
  t.throws(() => createRegistry({ tools: [withInput('broken', Type.Object({}, { minProperties: 'one' as unknown as number }), { publishInput: 'as-written' })], services: {} }), { code: 'APP_ERR_TOOL_DEFINITION', message: /broken: not a valid JSON Schema 2020-12 input schema/ })
  t.throws(() => createRegistry({ tools: [withInput('injecting', Type.Object({ clock: Type.Unsafe({ 'x-workspace-mcp-inject': 'clock' }) }), { publishInput: 'as-written' })], services: { clock: systemClock } }), { code: 'APP_ERR_TOOL_DEFINITION', message: /cannot declare injected services/ })
})

t.test('as written: a recursive schema meets a value nested 50,000 deep with INVALID_ARGUMENT, not a stack overflow; its field names are bounded', async (t) => {
  const tree = Type.Unsafe({ $ref: '#/$defs/node' })
  const input = Type.Object({ tree }, { $schema: 'https://json-schema.org/draft/2020-12/schema', $defs: { node: { type: 'array', items: { $ref: '#/$defs/node' } } } })
  const tool = createRegistry({ tools: [withInput('recursive', input, { publishInput: 'as-written' })], services: {} }).tool('recursive')!
  let deep: unknown = []
  for (let i = 0; i < 50_000; i++) deep = [deep]

  t.match(tool.validate({ tree: deep }), { ok: false, unknown: false, message: /^tree: must not nest arrays or objects more than 64 levels deep, received \[+\.\.\.$/ })
  t.same(tool.validate({ tree: [[[]]] }), { ok: true, value: { tree: [[[]]] } })
  t.match(tool.validate({ tree: [[['x']]] }), { ok: false, message: /^tree\[0\]\[0\]\[0\]: must be array$/ })
  t.match(tool.validate('text'), { ok: false, message: /^arguments: must be object$/ })
})

t.test('an injected service declared optional never gates its tool, and neither kind is published', async (t) => {
  const { Inject } = await import('../../src/tool-api/define-tool.js')
  const createTool = (name: string, optional: boolean): AnyTool => defineTool({
    name,
    title: name,
    category: 'guide',
    description: `Report whether the clock service was injected (${name}).`,
    annotations: { readOnlyHint: true },
    input: Type.Object({ clock: optional ? Type.Optional(Inject('clock')) : Inject('clock') }),
    run: ({ clock }) => textResult(clock === undefined ? 'no clock' : 'clock')
  }) as AnyTool
  const without = createRegistry({ tools: [createTool('needs_clock', false), createTool('may_use_clock', true)], services: {} })
  t.same(without.tools.map(tool => tool.wire.name), ['may_use_clock'], 'the required service gates, the optional one does not')
  t.same(without.tools[0].wire.inputSchema, { type: 'object', properties: {}, additionalProperties: false }, 'neither is published')
  const withClock = createRegistry({ tools: [createTool('needs_clock', false), createTool('may_use_clock', true)], services: { clock: systemClock } })
  t.same(withClock.tools.map(tool => tool.wire.name), ['needs_clock', 'may_use_clock'])
})

const named = (name: string, description: string, param = 'Query, e.g. "x"') => defineTool({
  name,
  title: name,
  category: 'search',
  description,
  annotations: { readOnlyHint: true },
  input: Type.Object({ q: Type.Optional(Type.String({ description: param })) }),
  run: () => textResult('ok')
})

t.test('excluded tools: not listed, named in `excluded` and `unserved`, their calls answered by explainExcluded', async (t) => {
  const tools = [
    named('list_things', 'List things.'),
    named('find_things', 'Find things by name.\n\nlist_things lists them all; get_thing shows one.', 'A name (list_things lists them), e.g. "a"'),
    named('get_thing', 'Get one thing.\n\nfind_things finds it.', 'list_things lists them')
  ]
  const seen: Array<[string, string, string[]]> = []
  const registry = createRegistry({
    tools,
    services: {},
    excluded: new Set(['list_things']),
    explainExcluded: (tool, category, served) => { seen.push([tool, category, served.map(e => e.name)]); return toolError('TOOL_EXCLUDED', `${tool} is left out`) },
    lint: (entries) => entries.length === 3 ? [] : ['the lint holds every tool, excluded or not']
  })
  const listed = JSON.parse(registry.toolsListPage(undefined)).tools as Array<Record<string, any>>

  t.same(listed.map(tool => tool.name), ['find_things', 'get_thing'])
  t.same(registry.excluded, ['list_things'])
  t.same([...registry.unserved], ['list_things'])
  t.same(registry.catalog.unlisted(), ['list_things'])
  t.equal(listed[0].description, 'Find things by name.\n\nget_thing shows one.', 'a description loses what names the excluded tool')
  t.equal(listed[0].inputSchema.properties.q.description, 'A name, e.g. "a"', 'so does a parameter\'s')
  t.equal(listed[1].inputSchema.properties.q.description, 'list_things lists them', 'a text that would be left empty stays whole')
  t.equal(registry.catalog.entries()[0].description, listed[0].description, 'the catalog (the guide\'s source) is the published text')
  t.same(seen, [['list_things', 'search', ['find_things', 'get_thing']]])
  t.match(registry.unavailableError('list_things'), { toolCode: 'TOOL_EXCLUDED' })
  t.equal(registry.closestTool('list_thingz'), undefined, 'a typo is never fixed to an excluded tool')
})

t.test('an excluded tool without explainExcluded is an unknown tool; a name registered twice is refused though excluded', async (t) => {
  const registry = createRegistry({ tools: [named('list_things', 'List things.'), named('find_things', 'Find things.')], services: {}, excluded: new Set(['list_things']) })

  t.equal(registry.unavailableError('list_things'), undefined)
  t.equal(registry.catalog.manifestJson().includes('list_things'), false)
  t.throws(() => createRegistry({ tools: [named('list_things', 'List things.'), named('list_things', 'Again.')], services: {}, excluded: new Set(['list_things']) }), { code: 'APP_ERR_TOOL_DUPLICATE' })
})

t.test('nothing unserved: the published texts are the definitions\' own', async (t) => {
  const registry = createRegistry({ tools: [named('find_things', 'Find things.\n\nlist_things lists them.')], services: {} })

  t.match(registry.catalog.manifestJson(), /list_things lists them\./)
  t.same([...registry.unserved], [])
})
