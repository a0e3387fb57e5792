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

t.test('yaml loads for a document the package does not ship: a workspace template', async (t) => {
  // Its absence for the shipped documents is the stdio smoke test's (test/bin/stdio.test.ts); this is the other half.
  // NODE_DEBUG=module makes Node name every CommonJS load on stderr.
  const proc = spawnStdio(t, ['--root', t.testdir({ '.workspace-mcp': { templates: { 'mine.md': '---\nname: mine\ndescription: Mine\n---\n# Mine {{x}}\n' } } }), '--log-level', 'silent'], { NODE_DEBUG: 'module' }, BUNDLE)
  proc.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'bundle-test', version: '1' } } })
  await proc.response(1)
  proc.send({ jsonrpc: '2.0', method: 'notifications/initialized' })
  proc.send({ jsonrpc: '2.0', id: 2, method: 'prompts/list', params: {} })
  const prompts = await proc.response(2) as { result: { prompts: Array<{ name: string }> } }
  proc.child.stdin.end()
  await proc.exited

  t.ok(prompts.result.prompts.some(p => p.name === 'mine'), 'a workspace template is parsed')
  t.match(proc.stderr(), /Module\._load REQUEST yaml\b/, 'by the library, loaded for it')
})
