import t from 'tap'
import { conformanceFixtures } from './fixtures/conformance/conformance.js'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pino from 'pino'
import { loadConfig } from '../src/base/config.js'
import { createRuntime } from '../src/runtime.js'
import { closeServices, createServices, type Services } from '../src/services/index.js'
import type { SymbolParser } from '../src/services/symbols/index.js'
import { tools as productTools } from '../src/tool-list.js'
import { git } from './helpers/git-repo.js'
import { waitUntil } from './helpers/wait.js'

// A repository root, so every product tool's services exist (the git tools need one).
const root = mkdtempSync(join(tmpdir(), 'wmcp-runtime-'))
git(root, ['init', '-q'])
const log = pino({ level: 'silent' })

t.test('without a search service the search tools are neither listed nor callable; the rest still serve', async (t) => {
  const config = loadConfig({ root }, {})
  const { search: _search, ...services } = await createServices(config, log)

  const runtime = await createRuntime(config, log, { services })
  const session = runtime.server.openSession({ stateless: true })
  const list = JSON.parse((await session.handle({ jsonrpc: '2.0', id: 1, method: 'tools/list' }))!)
  const call = JSON.parse((await session.handle({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'search_regex', arguments: { pattern: 'x' } } }))!)

  const names = list.result.tools.map((tool: { name: string }) => tool.name)
  t.notOk(names.includes('search_regex'))
  t.ok(names.includes('read_files'))
  t.match(runtime.registry.unavailable, { search_regex: ['search'] })
  t.equal(call.error.code, -32602)
})

t.test('the production runtime lists every shipped tool, in the order src/tool-list.ts gives', async (t) => {
  // search_semantic needs an embeddings provider configured (nothing is asked of it before the index starts).
  const runtime = await createRuntime(loadConfig({ root, embeddingsUrl: 'http://127.0.0.1:9/v1', embeddingsModel: 'm' }, {}), log)

  // Derived from the tool list, so adding a tool does not break this test.
  t.strictSame(runtime.registry.tools.map(tool => tool.wire.name), productTools.map(tool => tool.name))
  t.strictSame(runtime.registry.unavailable, {})
  const plain = await createRuntime(loadConfig({ root }, {}), log)
  t.strictSame(plain.registry.unavailable, { search_semantic: ['semantic'] }, 'without a provider, search_semantic alone is not listed')
})

t.test('extras are served beside the product\'s tools, resources and prompts; without them, none is', async (t) => {
  const fixtures = conformanceFixtures()
  const withExtras = await createRuntime(loadConfig({ root }, {}), log, { extras: fixtures })
  const without = await createRuntime(loadConfig({ root }, {}), log)
  t.teardown(async () => { await withExtras.close(); await without.close() })
  const names = (runtime: typeof without) => runtime.registry.tools.map(tool => tool.wire.name)

  t.ok(names(withExtras).includes('test_simple_text'))
  t.ok(names(withExtras).includes('read_files'), 'the product tools stay')
  t.equal(withExtras.registry.tools.length, without.registry.tools.length + fixtures.tools.length)
  t.notOk(names(without).some(name => name.startsWith('test_')))
})

t.test('a tool left out by configuration answers why and what to call instead; a near miss of a name is suggested', async (t) => {
  const bare = mkdtempSync(join(tmpdir(), 'wmcp-runtime-bare-'))
  const runtime = await createRuntime(loadConfig({ root: bare, codeIndex: 'off' }, {}), log)
  t.teardown(() => runtime.close())
  const names = runtime.registry.tools.map(tool => tool.wire.name)

  t.notOk(names.includes('find_symbol') || names.includes('git_log'), 'not listed')
  t.match(runtime.registry.unavailableError('find_symbol')?.message, /^ERROR CODE_INDEX_OFF: find_symbol is not offered by this server: the code index is turned off \(--code-index off; the operator can set --code-index on\)\. Hint: search_regex finds definitions/)
  t.match(runtime.registry.unavailableError('git_log')?.message, /^ERROR NOT_A_REPOSITORY: git_log is not offered by this server: the root is not the top of a git work tree \(no \.git folder\)\. Hint: read_files and list_directory/)
  t.match(runtime.registry.unavailableError('search_semantic')?.message, /^ERROR EMBEDDINGS_NOT_CONFIGURED/, 'a tool\'s own explanation comes first')
  t.equal(runtime.registry.unavailableError('no_such_tool'), undefined)
  t.equal(runtime.registry.closestTool('read_file'), 'read_files')
  t.equal(runtime.registry.closestTool('READ_FILES'), 'read_files')
  t.equal(runtime.registry.closestTool('frobnicate'), undefined)
  t.equal(runtime.registry.closestTool('x'.repeat(200)), undefined, 'a long name is not compared')
})

t.test('warmUp starts the token counter and warms the outline parser unless --lazy-threads; a warm-up that fails is only logged', async (t) => {
  const warmed: string[] = []
  const services = async (failing: boolean): Promise<Services> => {
    const real = await createServices(loadConfig({ root, codeIndex: 'off' }, {}), log)
    t.teardown(() => closeServices(real))
    const symbols = real.symbols as SymbolParser
    return { ...real, symbols: { ...symbols, warm: async () => { warmed.push('symbols'); if (failing) throw new Error('the parsing thread ended') } } }
  }
  const on = await createRuntime(loadConfig({ root, codeIndex: 'off' }, {}), log, { services: await services(false) })
  on.warmUp()
  await waitUntil(() => on.registry.services.tokenizer?.stats().workers === 1 && warmed.length === 1, 'the warm-up')
  t.same(warmed, ['symbols'])

  const lines: Array<Record<string, unknown>> = []
  const debugLog = pino({ level: 'debug' }, { write: (line: string) => { lines.push(JSON.parse(line)) } })
  const failing = await createRuntime(loadConfig({ root, codeIndex: 'off' }, {}), debugLog, { services: await services(true) })
  failing.warmUp()
  await waitUntil(() => lines.some(l => l.msg === 'warming the threads failed'), 'the failed warm-up to be logged')
  t.match(lines.find(l => l.msg === 'warming the threads failed'), { level: 20, err: { message: 'the parsing thread ended' } }, 'at debug: it costs only the speed-up')

  const off = await createRuntime(loadConfig({ root, codeIndex: 'off', lazyThreads: 'true' }, {}), log, { services: await services(false) })
  off.warmUp()
  t.equal(off.registry.services.tokenizer?.stats().workers, 0, 'no thread started')
  t.same(warmed, ['symbols', 'symbols'], 'the parser was not warmed')
})
