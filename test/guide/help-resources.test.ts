import t from 'tap'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createRegistry } from '../../src/mcp/registry/registry.js'
import { createMcpServer } from '../../src/mcp/server.js'
import { getToolUsageGuide } from '../../src/tools/get-tool-usage-guide.js'
import { createUsageGuide } from '../../src/guide/usage-guide.js'
import { helpResource, helpTemplate, HELP_URI } from '../../src/guide/help-resources.js'
import { generateInstructions } from '../../src/guide/instructions.js'
import { captureLogger, initializedSession, testTools } from '../helpers/engine.js'
import { Type } from '@sinclair/typebox'
import { defineTool, textResult } from '../../src/tool-api/define-tool.js'

const dir = mkdtempSync(join(tmpdir(), 'wmcp-help-'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))
const docsFile = join(dir, 'tools.yaml')
writeFileSync(docsFile, 'tools:\n  echo_text:\n    description: Echoes.\n')

async function session () {
  const { log } = captureLogger()
  const registry = createRegistry({
    tools: [...testTools, getToolUsageGuide],
    services: { clock: { now: () => 1000 }, guide: createUsageGuide({ docsFile }) },
    resources: [helpResource()],
    resourceTemplates: [helpTemplate()]
  })
  const server = createMcpServer({ registry, log, info: { name: 't', version: '0' } })
  return await initializedSession({ registry, server, log, lines: [] })
}

t.test('workspace://help is the same text get_tool_usage_guide returns', async (t) => {
  const { call } = await session()

  const resource = await call('resources/read', { uri: HELP_URI })
  const tool = await call('tools/call', { name: 'get_tool_usage_guide', arguments: {} })

  t.equal(resource.result.contents[0].mimeType, 'text/markdown')
  t.equal(resource.result.contents[0].text, tool.result.content[0].text)
})

t.test('workspace://help/{tool} is that tool\'s guide; an unknown tool is resource-not-found', async (t) => {
  const { call } = await session()

  const one = await call('resources/read', { uri: 'workspace://help/echo_text' })
  const tool = await call('tools/call', { name: 'get_tool_usage_guide', arguments: { tool_names: ['echo_text'] } })
  const missing = await call('resources/read', { uri: 'workspace://help/nonexistent' })

  t.equal(one.result.contents[0].text, tool.result.content[0].text)
  t.match(one.result.contents[0].text, /### echo_text/)
  t.equal(missing.error.code, -32002)
})

t.test('resources/list and templates/list announce the help resources; the template completes tool names', async (t) => {
  const { call } = await session()

  const list = await call('resources/list')
  const templates = await call('resources/templates/list')
  const completion = await call('completion/complete', { ref: { type: 'ref/resource', uri: 'workspace://help/{tool}' }, argument: { name: 'tool', value: 'ec' } })

  t.match(list.result.resources, [{ uri: HELP_URI, mimeType: 'text/markdown' }])
  t.match(templates.result.resourceTemplates, [{ uriTemplate: 'workspace://help/{tool}' }])
  t.same(completion.result.completion.values, ['echo_text'])
})

t.test('instructions are generated from the registry: categories, where to start, budgets, the help resource', async (t) => {
  const registry = createRegistry({ tools: [...testTools, getToolUsageGuide], services: { clock: { now: () => 0 }, guide: createUsageGuide({ docsFile }) } })

  const text = generateInstructions(registry.services.catalog?.entries() ?? [])

  t.match(text, /^Read-only access to one workspace/)
  t.match(text, /Tools by category — guide: echo_text, fail_tool, slow_tool, ask_client, get_tool_usage_guide\./)
  t.match(text, /workspace:\/\/help/)
  t.notMatch(text, /Start with/, 'no start tool among these')
  t.notMatch(text, /takes up to/, 'no batch field with a maximum among these')
})

t.test('instructions name a batch field\'s maxItems and a max_response_tokens default and maximum', async (t) => {
  const readNotes = defineTool({
    name: 'read_notes',
    title: 'Read Notes',
    category: 'read',
    annotations: { readOnlyHint: true },
    description: 'Read one or more notes — pass several in `paths` to read them in one call.',
    input: Type.Object({
      paths: Type.Array(Type.String(), { minItems: 1, maxItems: 20, description: 'Notes to read, e.g. ["todo.md"]' }),
      max_response_tokens: Type.Optional(Type.Integer({ minimum: 100, maximum: 8000, default: 2000, description: 'Answer budget, e.g. 500' }))
    }),
    run: () => textResult('ok')
  })
  const registry = createRegistry({ tools: [readNotes], services: {} })

  const text = generateInstructions(registry.services.catalog?.entries() ?? [])

  t.match(text, /Budgets: read_notes answers within max_response_tokens \(default 2000, at most 8000\); read_notes takes up to 20 paths per call\./)
})

t.test('without an injected clock the help resource is stamped with the time of the read', async (t) => {
  const registry = createRegistry({ tools: [...testTools, getToolUsageGuide], services: { guide: createUsageGuide({ docsFile }) } })
  const before = new Date().toISOString().slice(0, 10)

  const [content] = helpResource().read({ services: registry.services, signal: new AbortController().signal }) as Array<{ text: string }>

  t.match(content.text, new RegExp(`^# Tool usage guide\\n\\nGenerated ${before}T`))
})
