import t from 'tap'
import { linkSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createRegistry } from '../../src/mcp/registry/registry.js'
import { createMcpServer } from '../../src/mcp/server.js'
import { fillBundle, loadTemplatePrompts, parseBundle } from '../../src/guide/prompts.js'
import { readPackageTemplates, readWorkspaceTemplates } from '../../src/services/template-files.js'
import { createWorkspace } from '../../src/services/workspace/workspace.js'
import { captureLogger, initializedSession } from '../helpers/engine.js'

const BUILTIN = readPackageTemplates(fileURLToPath(new URL('../../docs/templates', import.meta.url)))
const dir = mkdtempSync(join(tmpdir(), 'wmcp-prompts-'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))

t.test('the three built-in bundles load: spec, impact, design_review, each with a required argument', async (t) => {
  const prompts = loadTemplatePrompts({ builtin: BUILTIN })

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
  const root = join(dir, 'ws')
  const user = join(root, 'templates')
  mkdirSync(user, { recursive: true })
  writeFileSync(join(user, 'spec.md'), '---\nname: spec\ndescription: Our own spec format\n---\nSpec for {{feature}}\n')
  writeFileSync(join(user, 'primer.md'), '# Team primer\n\nRead CONTRIBUTING.md first.\n')
  writeFileSync(join(user, 'broken.md'), '---\n[: not yaml\n---\nbody\n')
  const { log, lines } = captureLogger()

  const workspace = await createWorkspace({ root, log })
  const prompts = loadTemplatePrompts({ builtin: BUILTIN, user: await readWorkspaceTemplates(workspace, 'templates', log), log })

  t.same(prompts.map(p => p.name).sort(), ['design_review', 'impact', 'primer', 'spec'])
  t.equal(prompts.find(p => p.name === 'spec')?.description, 'Our own spec format')
  t.equal(prompts.find(p => p.name === 'primer')?.description, 'Team primer')
  t.ok(lines.some(l => l.level === 40 && /skipped/.test(String(l.msg))))
})

t.test('a workspace template that is a link out of the root, or a hard link, is skipped, never served', async (t) => {
  const outside = join(dir, 'outside')
  mkdirSync(outside, { recursive: true })
  const secret = 'CANARY-template-' + process.pid
  writeFileSync(join(outside, 'secret.md'), `# Secret\n\n${secret}\n`)
  writeFileSync(join(outside, 'hard.md'), `# Hard\n\n${secret}\n`)
  const root = join(dir, 'ws-hostile')
  const user = join(root, '.workspace-mcp', 'templates')
  mkdirSync(user, { recursive: true })
  symlinkSync(join(outside, 'secret.md'), join(user, 'abs-link.md'))
  symlinkSync('../../../outside/secret.md', join(user, 'rel-link.md'))
  symlinkSync('/etc/passwd', join(user, 'passwd.md'))
  symlinkSync(outside, join(root, '.workspace-mcp', 'linked-dir'))
  linkSync(join(outside, 'hard.md'), join(user, 'hard.md'))
  writeFileSync(join(user, 'fine.md'), '# Fine\n\nInside.\n')
  const { log } = captureLogger()
  const workspace = await createWorkspace({ root, log })

  const sources = await readWorkspaceTemplates(workspace, '.workspace-mcp/templates', log)
  const viaLinkedDir = await readWorkspaceTemplates(workspace, '.workspace-mcp/linked-dir', log)

  t.same(sources.map(s => s.file), ['.workspace-mcp/templates/fine.md'])
  t.same(viaLinkedDir, [])
  const prompts = loadTemplatePrompts({ builtin: [], user: sources, log })
  for (const p of prompts) t.notMatch(JSON.stringify(await p.get({}, { services: {}, signal: new AbortController().signal } as never)), secret)
  t.notMatch(JSON.stringify(sources), /root:|CANARY/)
})

t.test('prompts/list and prompts/get serve the bundles with arguments filled in', async (t) => {
  const { log } = captureLogger()
  const registry = createRegistry({ tools: [], services: {}, prompts: loadTemplatePrompts({ builtin: BUILTIN }) })
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
