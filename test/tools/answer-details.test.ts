// The smaller ways an answer can mislead or waste an agent's tokens (issue 7, item 10): footers that
// repeat defaults, a nested listing that repeats its folder on every line, "1 files", did-you-mean that
// prefers a far folder to the named one, a TIMEOUT hint that cannot help, a deadline-cut search logged
// as ok, and prompt arguments that never complete.
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import t, { type Test } from 'tap'
import pino from 'pino'
import { Type } from '@sinclair/typebox'
import { createSearch } from '../../src/services/search/search.js'
import { createTokenizer } from '../../src/services/tokenizer/tokenizer.js'
import { createWorkspace } from '../../src/services/workspace/workspace.js'
import { suggestPaths } from '../../src/services/workspace/suggest.js'
import { searchRegex } from '../../src/tools/search-regex.js'
import { listDirectory } from '../../src/tools/list-directory.js'
import { findFiles } from '../../src/tools/find-files.js'
import { defineTool, textResult, type ToolResult } from '../../src/tool-api/define-tool.js'
import { loadTemplatePrompts } from '../../src/guide/prompts.js'
import { createRegistry } from '../../src/mcp/registry/registry.js'
import { createMcpServer } from '../../src/mcp/server.js'
import { systemClock } from '../../src/services/clock.js'
import { captureLogger, initializedSession } from '../helpers/engine.js'
import { textOf, toolContext } from '../helpers/workspace-fixture.js'

const log = pino({ level: 'silent' })

async function tree (t: Test, files: Record<string, string>) {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'wmcp-details-')))
  t.teardown(() => fs.rmSync(root, { recursive: true, force: true }))
  for (const [file, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true })
    fs.writeFileSync(path.join(root, file), text)
  }
  const workspace = await createWorkspace({ root, log })
  return { root, workspace }
}

t.test('footers repeat only the arguments that differ from their defaults', async (t) => {
  const { workspace } = await tree(t, Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`src/f${i}.ts`, 'needle\n'])))
  const search = await createSearch({ workspace, log })
  const tokenizer = createTokenizer()
  t.teardown(() => { search.close(); tokenizer.close().catch(() => {}) })

  const result = await searchRegex.run({ search, tokenizer, pattern: 'needle', literal: false, ignore_case: false, output_mode: 'content', page_size: 10, context_lines: 0, respect_gitignore: true, max_response_tokens: 8000 }, toolContext())
  const footer = textOf(result).split('\n').at(-1)

  t.equal(footer, 'Results 1–10 of 12 | next: search_regex pattern="needle" offset=10')
  const custom = await searchRegex.run({ search, tokenizer, pattern: 'needle', page_size: 5, ignore_case: true }, toolContext())
  t.match(textOf(custom).split('\n').at(-1), / next: search_regex pattern="needle" ignore_case=true page_size=5 offset=5$/)
})

t.test('list_directory depth=2 indents deeper entries by name instead of repeating the folder path', async (t) => {
  const { workspace } = await tree(t, { 'src/lib/a.ts': 'a', 'src/lib/b.ts': 'b', 'src/main.ts': 'm', 'src/util/x.ts': 'x' })
  const full = textOf(await listDirectory.run({ workspace, path: 'src', depth: 2 }, toolContext()))
  const body = full.split('\n').slice(1, -1)

  t.same(body, ['src/lib/', '  a.ts  1 B', '  b.ts  1 B', 'src/util/', '  x.ts  1 B', 'src/main.ts  1 B'])
  t.match(full.split('\n')[0], /^# src — 6 entries \(depth 2, deeper entries indented under their folder/)

  const second = textOf(await listDirectory.run({ workspace, path: 'src', depth: 2, page_size: 2, offset: 2 }, toolContext()))
  t.same(second.split('\n').slice(1, 4), ['src/lib/  (continued)', '  b.ts  1 B', 'src/util/'], 'a page that starts inside a folder names it first')
})

t.test('a count of one takes the singular', async (t) => {
  const { workspace } = await tree(t, { '.hidden': 'h', 'one.md': 'needle\n' })
  const search = await createSearch({ workspace, log })
  const tokenizer = createTokenizer()
  t.teardown(() => { search.close(); tokenizer.close().catch(() => {}) })

  const listing = textOf(await listDirectory.run({ workspace }, toolContext()))
  t.match(listing, /^# \. — 1 entry /)
  t.match(listing, /Note: 1 hidden entry not shown/)
  t.match(textOf(await findFiles.run({ workspace, patterns: ['*.md'] }, toolContext())), /^# 1 file matches \["\*\.md"\]/)
  t.match(textOf(await searchRegex.run({ search, tokenizer, pattern: 'needle' }, toolContext())), /^1 matching line in 1 file for \/needle\//)
  t.match(textOf(await searchRegex.run({ search, tokenizer, pattern: 'needle', output_mode: 'files' }, toolContext())), /^1 file matches \/needle\//)
  t.match(textOf(await searchRegex.run({ search, tokenizer, pattern: 'needle', output_mode: 'count' }, toolContext())), /^1 file with 1 matching line for/)
})

t.test('did-you-mean reads the named folder first and ranks its entries before far ones', async (t) => {
  // A folder big enough that the breadth-first scan runs out of budget before it reaches drivers/net.
  const files: Record<string, string> = { 'drivers/net/nop.c': '', 'drivers/base/node.c': '', 'a/node.c': '' }
  for (let i = 0; i < 5200; i++) files[`a/f${String(i).padStart(4, '0')}.c`] = ''
  const { workspace } = await tree(t, files)

  const suggestions = await suggestPaths(workspace, 'drivers/net/nope.c')
  t.equal(suggestions[0], 'drivers/net/nop.c', `the sibling first: ${suggestions.join(', ')}`)
  t.same(await suggestPaths(workspace, '../outside/nope.c'), [], 'a folder outside the root is never read')
})

t.test('TIMEOUT says what shortens the tool\'s work; a result cut short is logged as partial', async (t) => {
  const waits = defineTool({
    name: 'wait_long',
    title: 'Wait',
    category: 'guide',
    description: 'Waits until aborted.',
    annotations: {},
    input: Type.Object({}),
    timeoutHint: 'ask for less, then call again',
    // The timer keeps the test process alive: the deadline sweep is unref'd, as a server's sockets hold it.
    run: async (_args, ctx) => await new Promise<ToolResult>((resolve, reject) => {
      const timer = setTimeout(() => resolve(textResult('late')), 60_000)
      ctx.signal.addEventListener('abort', () => { clearTimeout(timer); reject(ctx.signal.reason) }, { once: true })
    })
  })
  const partial = defineTool({
    name: 'cut_short',
    title: 'Cut short',
    category: 'guide',
    description: 'Returns a partial answer.',
    annotations: {},
    input: Type.Object({}),
    run: () => ({ ...textResult('some of it'), partial: true })
  })
  const whole = defineTool({
    name: 'all_of_it',
    title: 'All of it',
    category: 'guide',
    description: 'Returns a complete answer, saying so.',
    annotations: {},
    input: Type.Object({}),
    run: () => ({ ...textResult('all'), partial: false })
  })
  const { log: captured, lines } = captureLogger()
  const registry = createRegistry({ tools: [waits, partial, whole], services: { clock: systemClock } })
  const engine = { registry, server: createMcpServer({ registry, log: captured, info: { name: 'test', version: '0' }, instructions: '', toolTimeoutMs: 100 }), log: captured, lines }
  const { call } = await initializedSession(engine)

  const timedOut = await call('tools/call', { name: 'wait_long', arguments: {} })
  t.equal(timedOut.result.content[0].text, 'ERROR TIMEOUT: wait_long did not finish within 100 ms. Hint: ask for less, then call again.')
  const cut = await call('tools/call', { name: 'cut_short', arguments: {} })
  t.same(cut.result, { content: [{ type: 'text', text: 'some of it' }] }, 'the marker is never sent')
  t.same((await call('tools/call', { name: 'all_of_it', arguments: {} })).result, { content: [{ type: 'text', text: 'all' }] })
  t.match(lines.filter(l => l.msg === 'tool call'), [{ tool: 'wait_long', outcome: 'timeout' }, { tool: 'cut_short', outcome: 'partial' }, { tool: 'all_of_it', outcome: 'ok' }])
  t.notMatch(searchRegex.timeoutHint, /smaller page_size and/, 'search_regex does not offer a smaller page')
  t.match(searchRegex.timeoutHint, /does not shorten the scan/)
})

t.test('prompt arguments complete: paths through the jail, declared values, or the default', async (t) => {
  const { workspace } = await tree(t, { 'docs/design/cache.md': '', 'docs/deploy.md': '', 'docs/.draft.md': '', 'src/a.ts': '' })
  const source = (name: string, args: string) => ({ file: `${name}.md`, source: `---\nname: ${name}\narguments:\n${args}\n---\n# {{x}}\n` })
  const [prompt] = loadTemplatePrompts({ builtin: [source('p', '  - name: where\n    complete: paths\n  - name: tone\n    complete: [formal, friendly, frank]\n  - name: focus\n    default: correctness')] })
  const ctx = { services: { workspace }, signal: new AbortController().signal }
  const complete = async (arg: string, value: string) => await prompt.complete![arg](value, ctx)

  t.same(await complete('where', 'docs/de'), ['docs/deploy.md', 'docs/design/'])
  t.same(await complete('where', ''), ['docs/', 'src/'])
  t.same(await complete('where', 'docs/.'), ['docs/.draft.md'], 'hidden entries when the prefix asks for them')
  for (const outside of ['../', '../../etc/pa', '/etc/pa', 'docs/../../x']) t.same(await complete('where', outside), [], `nothing for ${outside}`)
  t.same(await complete('tone', 'fr'), ['friendly', 'frank'])
  t.same(await complete('focus', ''), ['correctness'])
  t.equal(prompt.complete!.x, undefined, 'an argument with nothing to offer has no completer')
  t.same(await prompt.complete!.where('docs/', { services: {}, signal: ctx.signal }), [], 'no workspace service, no paths')
})

t.test('template bundles: every malformed front matter is refused with its reason, and the default description is the heading or the name', async (t) => {
  const { parseBundle } = await import('../../src/guide/prompts.js')
  t.throws(() => parseBundle('a.md', '---\n- a list\n---\nbody'), /front matter must be a mapping/)
  t.throws(() => parseBundle('a.md', '---\nname: Bad Name\n---\nbody'), /prompt name 'Bad Name' must match/)
  t.throws(() => parseBundle('a.md', '---\narguments:\n  - description: no name\n---\nbody'), /each argument needs a name/)
  t.throws(() => parseBundle('a.md', '---\narguments:\n  - name: x\n    complete: 5\n---\nbody'), /complete must be "paths" or a list of strings/)
  t.equal(parseBundle('notes.md', '---\n\n---\n# The heading\nbody').description, 'The heading', 'empty front matter: the heading describes it')
  t.equal(parseBundle('notes.md', 'no heading, no front matter').description, 'notes')
})

t.test('path completion: a bare prefix completes at the root, a full page stops at 100, an aborted call stops at once', async (t) => {
  const files: Record<string, string> = { 'node_modules/x.js': '', '.gitignore': 'node_modules/\n' }
  for (let i = 0; i < 120; i++) files[`many/f${String(i).padStart(3, '0')}.md`] = ''
  const { workspace } = await tree(t, files)
  const { completePaths } = await import('../../src/guide/path-completion.js')

  t.same(await completePaths(workspace, 'ma'), ['many/'])
  t.same(await completePaths(workspace, 'no'), [], 'ignored folders are not offered')
  t.equal((await completePaths(workspace, 'many/f')).length, 100)
  const stopped = new AbortController()
  stopped.abort()
  t.same(await completePaths(workspace, 'many/f', stopped.signal), [])
})

t.test('a page size equal to its mode\'s default is left out of the next call; another is kept', async (t) => {
  const { workspace } = await tree(t, Object.fromEntries(Array.from({ length: 60 }, (_, i) => [`src/f${i}.ts`, 'needle\n'])))
  const search = await createSearch({ workspace, log })
  const tokenizer = createTokenizer()
  t.teardown(() => { search.close(); tokenizer.close().catch(() => {}) })
  const footer = async (args: Record<string, unknown>): Promise<string | undefined> => textOf(await searchRegex.run({ search, tokenizer, pattern: 'needle', ...args }, toolContext())).split('\n').at(-1)

  t.match(await footer({ output_mode: 'files', page_size: 50 }), / next: search_regex pattern="needle" output_mode="files" offset=50$/)
  t.match(await footer({ output_mode: 'files', page_size: 10 }), / next: search_regex pattern="needle" output_mode="files" page_size=10 offset=10$/)
})
