import t from 'tap'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createRegistry } from '../../src/mcp/registry.js'
import { createMcpServer } from '../../src/mcp/server.js'
import { fillBundle, loadTemplatePrompts, parseBundle } from '../../src/guide/prompts.js'
import { captureLogger, initializedSession } from '../helpers/engine.js'

const BUILTIN = fileURLToPath(new URL('../../docs/templates', import.meta.url))
const dir = mkdtempSync(join(tmpdir(), 'wmcp-prompts-'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))

t.test('the three built-in bundles load: spec, impact, design_review, each with a required argument', async (t) => {
  const prompts = loadTemplatePrompts({ builtinDir: BUILTIN })

  t.same(prompts.map(p => p.name).sort(), ['design_review', 'impact', 'spec'])
  for (const p of prompts) {
    t.ok((p.description ?? '').length > 20, `${p.name} has a description`)
    t.ok(p.arguments?.some(a => a.required === true), `${p.name} has a required argument`)
  }
})

t.test('front matter declares arguments; undeclared placeholders become optional ones', async (t) => {
  const bundle = parseBundle('/x/review.md', '---\ndescription: Review it\narguments:\n  - name: topic\n    required: true\n---\n# Review {{topic}}\n\nNotes: {{ notes }}\n')

  t.equal(bundle.name, 'review')
  t.same(bundle.arguments.map(a => [a.name, a.required]), [['topic', true], ['notes', false]])
  t.equal(fillBundle(bundle, { topic: 'caching' }), '# Review caching\n\nNotes: (not given)\n')
})

t.test('a workspace folder adds bundles and replaces a built-in of the same name; broken files are skipped', async (t) => {
  const user = join(dir, 'templates')
  mkdirSync(user)
  writeFileSync(join(user, 'spec.md'), '---\nname: spec\ndescription: Our own spec format\n---\nSpec for {{feature}}\n')
  writeFileSync(join(user, 'primer.md'), '# Team primer\n\nRead CONTRIBUTING.md first.\n')
  writeFileSync(join(user, 'broken.md'), '---\n[: not yaml\n---\nbody\n')
  const { log, lines } = captureLogger()

  const prompts = loadTemplatePrompts({ builtinDir: BUILTIN, userDir: user, log })

  t.same(prompts.map(p => p.name).sort(), ['design_review', 'impact', 'primer', 'spec'])
  t.equal(prompts.find(p => p.name === 'spec')?.description, 'Our own spec format')
  t.equal(prompts.find(p => p.name === 'primer')?.description, 'Team primer')
  t.ok(lines.some(l => l.level === 40 && /skipped/.test(String(l.msg))))
})

t.test('prompts/list and prompts/get serve the bundles with arguments filled in', async (t) => {
  const { log } = captureLogger()
  const registry = createRegistry({ tools: [], services: {}, prompts: loadTemplatePrompts({ builtinDir: BUILTIN }) })
  const server = createMcpServer({ registry, log, info: { name: 't', version: '0' } })
  const { call } = await initializedSession({ registry, server, log, lines: [] })

  const list = await call('prompts/list')
  const got = await call('prompts/get', { name: 'impact', arguments: { change: 'rename root to roots' } })
  const missing = await call('prompts/get', { name: 'impact', arguments: {} })

  t.match(list.result.prompts.find((p: { name: string }) => p.name === 'impact'), { title: 'Change impact analysis', arguments: [{ name: 'change', required: true }, { name: 'entry_points', required: false }] })
  t.match(got.result.messages[0], { role: 'user', content: { type: 'text', text: /^# Impact analysis: rename root to roots/ } })
  t.match(got.result.messages[0].content.text, /Starting points: not known yet/)
  t.notMatch(got.result.messages[0].content.text, /\{\{/)
  t.equal(missing.error.code, -32602)
})
