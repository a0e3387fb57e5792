import t from 'tap'
import { execFileSync } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { BUNDLE, spawnStdio } from '../helpers/spawn-stdio.js'

// The conformance fixtures ship in the package but never load on the product path: they live in a
// chunk that only a dynamic import() reaches (createRuntime, when fixtures = conformance). Proven on
// the built bundle by following static imports from cli.js and from every command's entry chunk.
// (stdio.cjs, the CommonJS copy of the stdio command, holds them too, behind esbuild's lazy module
// init: compiled and run only when that require() runs — the third test lists them through it.)

const DIST = dirname(BUNDLE)
const SRC = fileURLToPath(new URL('../../src/', import.meta.url))
const MARK = 'Tests simple text content response'

const STATIC = /^(?:import|export)\b[^;]*?\bfrom\s*"(\.\/[^"]+)"|^import\s*"(\.\/[^"]+)"/gm
const DYNAMIC = /\bimport\(\s*"(\.\/[^"]+)"\s*\)/g

const chunks = new Map(readdirSync(DIST).filter(f => f.endsWith('.js')).map(f => [f, readFileSync(join(DIST, f), 'utf8')]))
const targets = (file: string, pattern: RegExp): string[] =>
  [...(chunks.get(file) ?? '').matchAll(pattern)].map(m => (m[1] ?? m[2]).slice(2))

/** Every chunk loaded when `file` loads: itself and its static imports, transitively. */
function staticClosure (file: string): Set<string> {
  const seen = new Set<string>()
  const queue = [file]
  while (queue.length > 0) {
    const next = queue.pop()!
    if (seen.has(next)) continue
    seen.add(next)
    queue.push(...targets(next, STATIC))
  }
  return seen
}

function srcFiles (dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true }).filter(e => e.isFile() && e.name.endsWith('.ts')).map(e => join(e.parentPath, e.name))
}

t.test('the marker is the fixtures\' own text, and exactly one built chunk holds it', async (t) => {
  const holders = srcFiles(SRC).filter(f => readFileSync(f, 'utf8').includes(MARK)).map(f => relative(SRC, f))
  const built = [...chunks].filter(([, text]) => text.includes(MARK)).map(([f]) => f)

  t.strictSame(holders, ['fixtures/conformance-tools.ts'])
  t.equal(built.length, 1, `one chunk: ${built.join(', ')}`)
  t.not(built[0], 'cli.js')
})

t.test('no command statically loads the fixtures chunk; the runtime reaches it by a dynamic import only', async (t) => {
  const fixtureChunk = [...chunks].find(([, text]) => text.includes(MARK))![0]
  const commands = targets('cli.js', DYNAMIC)
  t.ok(commands.some(f => f.startsWith('stdio-')) && commands.some(f => f.startsWith('http-')), `cli.js loads the commands lazily: ${commands.join(', ')}`)

  for (const entry of ['cli.js', ...commands]) {
    const loaded = staticClosure(entry)
    t.notOk(loaded.has(fixtureChunk), `${entry} (with ${[...loaded].join(', ')}) does not load ${fixtureChunk}`)
  }
  for (const entry of commands.filter(f => /^(stdio|http)-/.test(f))) {
    const lazy = [...staticClosure(entry)].flatMap(f => targets(f, DYNAMIC))
    t.ok(lazy.includes(fixtureChunk), `${entry} can still load ${fixtureChunk} on request`)
  }
})

t.test('stdio --fixtures conformance loads the lazy chunk and lists the fixture tools; without it they are absent', async (t) => {
  const root = t.testdir({ 'a.txt': 'x\n' })
  const listed: string[][] = []
  for (const args of [['--fixtures', 'conformance'], []]) {
    const proc = spawnStdio(t, ['--root', root, '--log-level', 'silent', ...args], {}, BUNDLE)
    proc.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'bundle-test', version: '1' } } })
    await proc.response(1)
    proc.send({ jsonrpc: '2.0', method: 'notifications/initialized' })
    proc.send({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} })
    const list = await proc.response(2) as { result: { tools: Array<{ name: string }> } }
    proc.child.stdin.end()
    await proc.exited
    listed.push(list.result.tools.map(tool => tool.name))
  }

  t.ok(listed[0].includes('test_simple_text'), 'with fixtures')
  t.ok(listed[0].includes('read_files'))
  t.notOk(listed[1].includes('test_simple_text'), 'without fixtures')
})

t.test('the shipped YAML is answered from the build\'s parse table: yaml loads only for a document the package does not ship', async (t) => {
  const YAML_LOAD = /Module\._load REQUEST yaml\b/
  const session = async (root: string): Promise<{ prompts: string[], guide: string, stderr: string }> => {
    // NODE_DEBUG=module makes Node name every CommonJS load on stderr.
    const proc = spawnStdio(t, ['--root', root, '--log-level', 'silent'], { NODE_DEBUG: 'module' }, BUNDLE)
    proc.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'bundle-test', version: '1' } } })
    await proc.response(1)
    proc.send({ jsonrpc: '2.0', method: 'notifications/initialized' })
    proc.send({ jsonrpc: '2.0', id: 2, method: 'prompts/list', params: {} })
    proc.send({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'get_tool_usage_guide', arguments: { tool_names: ['list_directory'] } } })
    const prompts = await proc.response(2) as { result: { prompts: Array<{ name: string }> } }
    const guide = await proc.response(3) as { result: { content: Array<{ text: string }> } }
    proc.child.stdin.end()
    await proc.exited
    return { prompts: prompts.result.prompts.map(p => p.name), guide: guide.result.content[0].text, stderr: proc.stderr() }
  }

  const shipped = await session(t.testdir({ 'a.txt': 'x\n' }))
  t.ok(shipped.prompts.includes('spec'), 'the built-in templates are listed')
  t.match(shipped.guide, /### list_directory(?=[\s\S]*\*\*Returns:\*\*)(?=[\s\S]*\*\*Examples\*\*)/, 'the overlay\'s returns note and examples are rendered')
  t.notMatch(shipped.stderr, YAML_LOAD, 'and yaml was never loaded')
  t.match(shipped.stderr, /REQUEST node:\S+ parent: \S*[/\\]stdio\.cjs\b/, 'the command ran from the CommonJS bundle that has the code cache')
  t.match(shipped.stderr, /MODULE \d+: /, 'NODE_DEBUG did report module loads (the check above can fail)')

  const own = await session(t.testdir({ '.workspace-mcp': { templates: { 'mine.md': '---\nname: mine\ndescription: Mine\n---\n# Mine {{x}}\n' } } }))
  t.ok(own.prompts.includes('mine'), 'a workspace template is parsed')
  t.match(own.stderr, YAML_LOAD, 'by the library, loaded for it')
})

t.test('the shipped stdio bundle\'s code cache is one this Node accepts, with the flags a user runs it with', async (t) => {
  const bundle = join(DIST, 'stdio.cjs')
  const loader = join(SRC, '..', 'dist', 'src', 'code-cache.js')
  const { NODE_OPTIONS: _testFlags, ...env } = process.env
  const report = execFileSync(process.execPath, ['--input-type=module', '-e', `
    import { readFileSync } from 'node:fs'
    const { cacheFileOf, compileBundle } = await import(${JSON.stringify(loader)})
    const cache = readFileSync(cacheFileOf(${JSON.stringify(bundle)}))
    process.stdout.write(JSON.stringify({ bytes: cache.length, rejected: compileBundle(${JSON.stringify(bundle)}, cache).cacheRejected }))
  `], { env: { ...env, _TAPJS_PROCESSINFO_COVERAGE_: '0' }, encoding: 'utf8' })
  const { bytes, rejected } = JSON.parse(report) as { bytes: number, rejected: boolean }
  t.ok(bytes > 100_000, `the cache holds the trained functions (${bytes} bytes)`)
  t.equal(rejected, false, 'V8 accepts it: a build on another Node, or a change of flags, would fail here')
})
