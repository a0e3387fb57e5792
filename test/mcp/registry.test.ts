import t from 'tap'
import { Type } from '@sinclair/typebox'
import { createRegistry } from '../../src/mcp/registry.js'
import { defineTool, textResult, type AnyTool } from '../../src/tools/define-tool.js'
import { testTools } from '../helpers/engine.js'
import { systemClock } from '../../src/services/clock.js'

const many = (n: number) => Array.from({ length: n }, (_, i) => defineTool({
  name: `tool_${i}`,
  title: `Tool ${i}`,
  category: 'fixture',
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

t.test('the serialized page is computed once: the same bytes every time', async (t) => {
  const registry = createRegistry({ tools: testTools, services: { clock: systemClock } })

  t.equal(registry.toolsListPage(undefined), registry.toolsListPage(undefined))
  t.equal(JSON.parse(registry.services.catalog!.manifestJson()).length, registry.tools.length)
})

t.test('a duplicate tool name stops startup', async (t) => {
  t.throws(() => createRegistry({ tools: [...many(2), ...many(1)], services: {} }), { code: 'APP_ERR_TOOL_DUPLICATE' })
})

t.test('a schema the compatibility check rejects stops startup, naming the tool and the JSON path', async (t) => {
  const bad = defineTool({
    name: 'bad_tool',
    title: 'Bad',
    category: 'fixture',
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
