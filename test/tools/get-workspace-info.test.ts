import t from 'tap'
import pino from 'pino'
import { createSearch } from '../../src/services/search/search.js'
import { getWorkspaceInfo } from '../../src/tools/get-workspace-info.js'
import { searchRegex } from '../../src/tools/search-regex.js'
import { createRegistry } from '../../src/mcp/registry/registry.js'
import { hostileServices, textOf, toolContext } from '../helpers/workspace-fixture.js'

t.test('reports the root by name only, limits, ripgrep version and capabilities', async (t) => {
  const fx = await hostileServices(t, { big: false })
  const search = await createSearch({ workspace: fx.workspace, log: pino({ level: 'silent' }) })
  const registry = createRegistry({ tools: [searchRegex, getWorkspaceInfo], services: { workspace: fx.workspace, search, tokenizer: fx.tokenizer } })
  const catalog = registry.services.catalog!

  const result = await getWorkspaceInfo.run({ workspace: fx.workspace, search, tokenizer: fx.tokenizer, catalog }, toolContext())
  const text = textOf(result)

  t.notOk(result.isError)
  t.match(text, /Root: `root`/)
  t.match(text, /ripgrep 15\./)
  t.notMatch(JSON.stringify(result), fx.base, 'no absolute path anywhere')
  t.match(result.structuredContent, {
    roots: [{ name: 'root', path: '.' }],
    ripgrep: { version: /^15\./, pcre2_enabled: false },
    limits: { search_timeout_ms: 15000, max_line_chars: 2000, min_response_tokens: 1000, max_response_tokens: 20000 },
    capabilities: { gitignore: true, tokenizer: 'cl100k_base', tools: ['search_regex', 'get_workspace_info'] }
  })
  const inputSchema = registry.tool('get_workspace_info')!.wire.inputSchema as { type: string, properties: Record<string, unknown> }
  t.equal(inputSchema.type, 'object')
  t.strictSame(Object.keys(inputSchema.properties), [], 'no parameter: the injected services are not published')
})

t.test('a filesystem root is named "/" (its basename is empty), and a PCRE2 build is said to be left off', async (t) => {
  const fx = await hostileServices(t, { big: false })
  const search = await createSearch({ workspace: fx.workspace, log: pino({ level: 'silent' }) })
  const real = await search.engine()
  const registry = createRegistry({ tools: [getWorkspaceInfo], services: { workspace: fx.workspace, search, tokenizer: fx.tokenizer } })
  const workspace = Object.create(fx.workspace, { roots: { value: [{ name: '/', path: '/' }] } }) as typeof fx.workspace
  const pcre2 = Object.assign(Object.create(search), { engine: async () => ({ ...real, pcre2Available: true }) }) as typeof search

  const text = textOf(await getWorkspaceInfo.run({ workspace, search: pcre2, tokenizer: fx.tokenizer, catalog: registry.services.catalog! }, toolContext()))

  t.match(text, /Root: `\/`/)
  t.match(text, /no look-around or backreferences \(PCRE2 is built in but not enabled\)/)

  const plain = Object.assign(Object.create(search), { engine: async () => ({ ...real, pcre2Available: false }) }) as typeof search
  const without = textOf(await getWorkspaceInfo.run({ workspace, search: plain, tokenizer: fx.tokenizer, catalog: registry.services.catalog! }, toolContext()))
  t.match(without, /no look-around or backreferences\n/, 'a build without PCRE2 does not mention it')
  t.notMatch(without, /PCRE2/)
})

t.test('without ripgrep it is still listed and says what is missing: no search engine, no search limits', async (t) => {
  const fx = await hostileServices(t, { big: false })
  const registry = createRegistry({ tools: [searchRegex, getWorkspaceInfo], services: { workspace: fx.workspace, tokenizer: fx.tokenizer } })
  t.same(registry.tools.map(tool => tool.definition.name), ['get_workspace_info'], 'search_regex is left out; get_workspace_info is not')
  const result = await getWorkspaceInfo.run({ workspace: fx.workspace, tokenizer: fx.tokenizer, catalog: registry.services.catalog! }, toolContext())
  t.notOk(result.isError)
  t.match(textOf(result), /## Search engine\n- none: ripgrep cannot run here, so search_regex is not served; find_files finds files by name/)
  t.notOk('ripgrep' in (result.structuredContent as object), 'no engine to report')
  t.strictSame((result.structuredContent as { limits: object }).limits, { max_line_chars: 2000, min_response_tokens: 1000, max_response_tokens: 20000 })
})
