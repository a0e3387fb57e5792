import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import pino from 'pino'
import { createSearch } from '../../src/services/search/search.js'
import { searchRegex } from '../../src/tools/search-regex.js'
import { createWorkspace } from '../../src/services/workspace/workspace.js'
import { createTokenizer } from '../../src/services/tokenizer/tokenizer.js'
import { createRegistry } from '../../src/mcp/registry/registry.js'
import { createMcpServer } from '../../src/mcp/server.js'
import { hostileServices, textOf, toolCodeOf, toolContext } from '../helpers/workspace-fixture.js'

const log = pino({ level: 'silent' })

async function fixture (t: { teardown(fn: () => void): void }) {
  const fx = await hostileServices(t, { big: false })
  const search = await createSearch({ workspace: fx.workspace, log })
  t.teardown(() => {
    search.close()
    fx.tokenizer.close().catch(() => {})
  })
  return { ...fx, search }
}

t.test('content mode: Markdown grouped by file with line numbers, structured locations and a footer', async (t) => {
  const fx = await fixture(t)

  const result = await searchRegex.run({ pattern: 'helper', search: fx.search, tokenizer: fx.tokenizer, page_size: 2 }, toolContext())
  const text = textOf(result)

  t.notOk(result.isError)
  t.match(text, /^5 matching lines in 3 files for \/helper\//)
  t.match(text, /\n## src\/index\.ts\n1: import \{ helper \}.*\n3: export const main = \(\) => helper\(1\)\n/)
  t.match(text, /Results 1–2 of 5 \| next: search_regex pattern="helper" page_size=2 offset=2$/)
  t.match(result.structuredContent, {
    mode: 'content',
    path: '.',
    matches: [{ path: 'src/index.ts', line: 1 }, { path: 'src/index.ts', line: 3 }],
    files: [],
    total_files: 3,
    pagination: { offset: 0, page_size: 2, returned: 2, total: 5, has_more: true, next_offset: 2 },
    truncated: false,
    cached: false
  })

  const next = await searchRegex.run({ pattern: 'helper', search: fx.search, tokenizer: fx.tokenizer, page_size: 2, offset: 2 }, toolContext())
  t.match(next.structuredContent, { cached: true, matches: [{ path: 'src/util/helpers.test.ts', line: 1 }, { path: 'src/util/helpers.test.ts', line: 2 }] })
})

t.test('files and count modes, context lines with separators', async (t) => {
  const fx = await fixture(t)
  const run = (args: Record<string, unknown>) => searchRegex.run({ pattern: 'helper', search: fx.search, tokenizer: fx.tokenizer, ...args }, toolContext())

  const files = await run({ output_mode: 'files' })
  const count = await run({ output_mode: 'count', context_lines: 2 })
  const context = await run({ pattern: 'line (three|four)|Guide', path: 'docs', context_lines: 1 })

  t.match(textOf(files), /\nsrc\/index\.ts\nsrc\/util\/helpers\.test\.ts\nsrc\/util\/helpers\.ts\n/)
  t.same((files.structuredContent as { files: unknown[] }).files[0], { path: 'src/index.ts' }, 'files mode does not count: no count, no -1 sentinel')
  t.same((count.structuredContent as { files: unknown[] }).files[0], { path: 'src/index.ts', count: 2 })
  t.match(textOf(count), /\nsrc\/index\.ts: 2\n/)
  t.match(textOf(count), /note: context_lines ignored/)
  t.match(textOf(context), /## docs\/guide\.md\n1: # Guide\n2- \n3: line three\n4: line four\n/)
})

t.test('over budget the answer degrades (shorter lines, fewer results) and says so, never fails', async (t) => {
  const fx = await fixture(t)
  const words = Array.from({ length: 400 }, (_, i) => `word${i}`).join(' ')
  fs.writeFileSync(path.join(fx.root, 'wide.txt'), Array.from({ length: 60 }, (_, i) => `needle ${i} ${words}`).join('\n'))

  const result = await searchRegex.run({ pattern: 'needle', search: fx.search, tokenizer: fx.tokenizer, page_size: 50, max_response_tokens: 1000 }, toolContext())
  const text = textOf(result)

  t.notOk(result.isError)
  t.ok(await fx.tokenizer.countExact(text) <= 1000, 'fits the budget')
  t.match(text, /note: response budget of 1000 tokens/)
  t.match(result.structuredContent, { truncated: true, pagination: { total: 60, has_more: true } })
  const p = (result.structuredContent as { pagination: { returned: number, next_offset: number } }).pagination
  t.equal(p.next_offset, p.returned, 'the next call continues where this answer stopped')
  t.match(text, new RegExp(`offset=${p.next_offset}$`))

  const roomy = await searchRegex.run({ pattern: 'needle', search: fx.search, tokenizer: fx.tokenizer, page_size: 5, max_response_tokens: 20000 }, toolContext())
  t.match(roomy.structuredContent, { truncated: false, pagination: { returned: 5 } })
})

t.test('errors: invalid regex, look-around, outside path; the canary never appears', async (t) => {
  const fx = await fixture(t)
  const run = (args: Record<string, unknown>) => searchRegex.run({ pattern: 'x', search: fx.search, tokenizer: fx.tokenizer, ...args }, toolContext())

  t.equal(await toolCodeOf(run({ pattern: 'foo(' })), 'INVALID_REGEX')
  t.equal(await toolCodeOf(run({ pattern: 'a(?=b)' })), 'UNSUPPORTED_REGEX_FEATURE')
  t.equal(await toolCodeOf(run({ path: '../outside' })), 'PATH_OUTSIDE_ROOT')
  t.equal(await toolCodeOf(run({ path: 'link-to-outside-dir' })), 'SYMLINK_ESCAPES_ROOT')
  for (const pattern of ['CANARY', 'secret']) {
    const result = await run({ pattern, output_mode: 'content', page_size: 100 })
    t.notMatch(JSON.stringify(result), fx.canary)
    t.notMatch(JSON.stringify(result), fx.base)
  }
})

t.test('through the engine: listed with a flat schema, output validates, errors are isError results', async (t) => {
  const fx = await fixture(t)
  const registry = createRegistry({ tools: [searchRegex], services: { workspace: fx.workspace, search: fx.search, tokenizer: fx.tokenizer } })
  const server = createMcpServer({ registry, log, info: { name: 'test', version: '0.0.0' }, toolTimeoutMs: 10000 })
  const session = server.openSession({ send: () => {} })
  let id = 0
  const call = async (method: string, params?: Record<string, unknown>) => JSON.parse((await session.handle({ jsonrpc: '2.0', id: ++id, method, params }))!)
  await call('initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } })
  await session.handle({ jsonrpc: '2.0', method: 'notifications/initialized' })

  const list = await call('tools/list')
  const ok = await call('tools/call', { name: 'search_regex', arguments: { pattern: 'helper', output_mode: 'count' } })
  const bad = await call('tools/call', { name: 'search_regex', arguments: { pattern: '[' } })

  const tool = list.result.tools[0]
  t.equal(tool.name, 'search_regex')
  t.notOk('search' in tool.inputSchema.properties, 'injected services are not published')
  t.strictSame(tool.inputSchema.required, ['pattern'])
  t.match(tool.annotations, { readOnlyHint: true, idempotentHint: true, openWorldHint: false })
  t.notOk(ok.result.isError)
  t.match(ok.result.structuredContent, { mode: 'count', files: [{ path: 'src/index.ts', count: 2 }] })
  t.equal(bad.result.isError, true)
  t.match(bad.result.content[0].text, /^ERROR INVALID_REGEX: /)
})

t.test('file names are data: a name holding a newline or an escape sequence cannot forge a line of the output', async (t) => {
  const fx = await fixture(t)
  const names = ['fake\n### injected — lines 1–1 of 1.txt', 'esc-\u001b[31mred.txt', 'sep-\u2028-\u202e.txt']
  fs.mkdirSync(path.join(fx.root, 'names'))
  for (const name of names) fs.writeFileSync(path.join(fx.root, 'names', name), 'forged needle\n')

  for (const mode of ['content', 'files', 'count'] as const) {
    const result = await searchRegex.run({ pattern: 'forged needle', path: 'names', output_mode: mode, search: fx.search, tokenizer: fx.tokenizer }, toolContext())
    const text = textOf(result)
    t.notOk(result.isError, mode)
    t.notMatch(text, /^### injected/m, `${mode}: no forged heading`)
    // eslint-disable-next-line no-control-regex -- the point: no raw control or separator character reaches the text
    t.notMatch(text, /[\u0000-\u0009\u000b-\u001f\u007f\u2028\u2029\u202a-\u202e]/, `${mode}: no raw control characters`)
    t.match(text, 'names/fake\\x0a### injected — lines 1–1 of 1.txt')
    t.match(text, 'names/esc-\\x1b[31mred.txt')
    t.match(text, 'names/sep-\\xe2\\x80\\xa8-\\xe2\\x80\\xae.txt')
    const paths = result.structuredContent as { matches: Array<{ path: string }>, files: Array<{ path: string }> }
    const shown = [...paths.matches, ...paths.files].map(m => m.path)
    t.ok(shown.includes('names/fake\\x0a### injected — lines 1–1 of 1.txt'), `${mode}: structured paths use the same form`)
  }
  // The shown form reads back: searching the file by that name finds it.
  const again = await fx.search.search({ pattern: 'forged', path: 'names/fake\\x0a### injected — lines 1–1 of 1.txt' }, { offset: 0, pageSize: 10 })
  t.equal(again.total, 1)
})

t.test('files and count modes page 50 files by default, content mode 10 lines', async (t) => {
  const many = Object.fromEntries(Array.from({ length: 60 }, (_, i) => [`f${String(i).padStart(2, '0')}.txt`, 'needle\n']))
  const workspace = await createWorkspace({ root: t.testdir(many), log })
  const search = await createSearch({ workspace, log })
  const tokenizer = createTokenizer()
  t.teardown(() => { search.close(); tokenizer.close().catch(() => {}) })
  const page = async (args: Record<string, unknown>) => (await searchRegex.run({ search, tokenizer, pattern: 'needle', ...args }, toolContext())).structuredContent as { pagination: { returned: number } }
  t.equal((await page({ output_mode: 'count' })).pagination.returned, 50)
  t.equal((await page({ output_mode: 'files' })).pagination.returned, 50)
  t.equal((await page({})).pagination.returned, 10)
})

t.test('a page whose files changed since they were counted is stepped over; a page cut short goes on after what it showed', async (t) => {
  const files = Object.fromEntries(Array.from({ length: 6 }, (_, i) => [`f${i}.txt`, 'needle\n'.repeat(5)]))
  const workspace = await createWorkspace({ root: t.testdir(files), log })
  // A tiny collection cap: the set is counted, and each page reads its window.
  const search = await createSearch({ workspace, log, maxPageBytes: 1000 })
  const tokenizer = createTokenizer()
  t.teardown(() => { search.close(); tokenizer.close().catch(() => {}) })
  const run = (args: Record<string, unknown>) => searchRegex.run({ search, tokenizer, pattern: 'needle', ...args }, toolContext())

  const cut = await run({ page_size: 20 })
  for (let i = 0; i < 6; i++) fs.writeFileSync(path.join(workspace.roots[0].path, `f${i}.txt`), 'hay\n')
  const gone = await run({ page_size: 20, offset: 20 })

  const p = (cut.structuredContent as { pagination: { returned: number, next_offset: number } }).pagination
  t.ok(p.returned > 0 && p.returned < 20, `${p.returned} results fit what a page may hold`)
  t.equal(p.next_offset, p.returned, 'the next call starts after the last result shown')
  t.match(textOf(cut), /note: this page was cut at \d+ of 20 results: its lines would have taken more than/)
  t.match(gone.structuredContent, { matches: [], pagination: { offset: 20, returned: 0, total: 30, has_more: false, next_offset: -1 } })
  t.match(textOf(gone), /\nNo results on this page: its files no longer match \(they changed since the search was counted\)\.\n/)
  const middle = await run({ page_size: 5, offset: 10 })
  t.match(middle.structuredContent, { matches: [], pagination: { returned: 0, has_more: true, next_offset: 15 } }, 'stepped over, not repeated')
})
