import t from 'tap'
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { BUNDLE, spawnStdio } from '../helpers/spawn-stdio.js'

// What the build ships (dist/bin): no test code, and the stdio command as a CommonJS bundle (that V8 accepts its code
// cache is the smoke test's, test/bin/stdio.test.ts).

const DIST = dirname(BUNDLE)
const SRC = fileURLToPath(new URL('../../src/', import.meta.url))
const FIXTURES = fileURLToPath(new URL('../fixtures/conformance/', import.meta.url))

t.test('no fixture ships: the conformance suite\'s texts are in test/ only, and in no built file', async (t) => {
  // Texts only the fixtures hold: a tool's description and a tool's name.
  const marks = ['Tests simple text content response', 'test_simple_text']
  const fixtureText = readdirSync(FIXTURES).map(f => readFileSync(join(FIXTURES, f), 'utf8')).join('\n')
  for (const mark of marks) t.ok(fixtureText.includes(mark), `the fixtures hold "${mark}" (so this test can fail)`)
  const built = readdirSync(DIST).filter(f => /\.(c?js|json)$/.test(f))
  t.ok(built.includes('cli.js') && built.includes('stdio.cjs'), `the build is there (${built.length} files)`)
  const holders = built.filter(f => marks.some(mark => readFileSync(join(DIST, f), 'utf8').includes(mark)))
  t.same(holders, [], 'dist/bin holds none of them')
  const sources = readdirSync(SRC, { recursive: true, encoding: 'utf8' }).filter(f => f.endsWith('.ts'))
  t.same(sources.filter(f => marks.some(mark => readFileSync(join(SRC, f), 'utf8').includes(mark))), [], 'nor does src/')
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
