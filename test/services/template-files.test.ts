import t from 'tap'
import fs from 'node:fs'
import path from 'node:path'
import pino from 'pino'
import { readPackageTemplates, readWorkspaceTemplates } from '../../src/services/template-files.js'
import { createWorkspace } from '../../src/services/workspace/workspace.js'

// Where prompt templates come from: the package's own folder, and the workspace's through the jail.

const log = pino({ level: 'silent' })

t.test('package templates: every .md of the folder by name; a missing folder or a file gives none', async (t) => {
  const dir = t.testdir({ 'b.md': 'B', 'a.md': 'A', 'notes.txt': 'x' })

  t.strictSame(readPackageTemplates(dir).map(s => [path.basename(s.file), s.source]), [['a.md', 'A'], ['b.md', 'B']])
  t.strictSame(readPackageTemplates(path.join(dir, 'none')), [])
  t.strictSame(readPackageTemplates(path.join(dir, 'a.md')), [])
})

t.test('workspace templates: a templates path that is a file, or missing, gives none; bundles come by name', async (t) => {
  const root = fs.realpathSync(t.testdir({ tpl: { 'z.md': '# Z', 'm.md': '# M', 'a.md': '# A' }, 'file.md': 'x' }))
  const workspace = await createWorkspace({ root, log })

  t.strictSame((await readWorkspaceTemplates(workspace, 'tpl', log)).map(s => s.file), ['tpl/a.md', 'tpl/m.md', 'tpl/z.md'])
  t.strictSame(await readWorkspaceTemplates(workspace, 'file.md', log), [])
  t.strictSame(await readWorkspaceTemplates(workspace, 'missing', log), [])
})

t.test('workspace templates: a folder that cannot be listed gives none, and a warn line says why', async (t) => {
  const root = fs.realpathSync(t.testdir({ templates: { 'a.md': '# A' } }))
  const workspace = await createWorkspace({ root, log })
  const refused = Object.assign(new Error('EACCES: permission denied, scandir'), { code: 'EACCES' })
  const unlistable = { ...workspace, readDirectory: async () => { throw refused } }
  const warned: unknown[] = []
  const warnLog = { warn: (fields: unknown, msg: string) => warned.push([fields, msg]) } as unknown as typeof log

  t.strictSame(await readWorkspaceTemplates(unlistable, 'templates', warnLog), [])
  t.same(warned, [[{ err: refused, dir: 'templates' }, 'templates folder not listed: no workspace template bundles']])
})

t.test('workspace templates: an absent folder is looked up, not searched for (no did-you-mean scan of the root)', async (t) => {
  const root = fs.realpathSync(t.testdir({ templates: { 'a.md': '# A' } }))
  const workspace = await createWorkspace({ root, log })
  const asked: Array<boolean | undefined> = []
  const spying = { ...workspace, resolve: async (...args: Parameters<typeof workspace.resolve>) => { asked.push(args[1]?.mustExist); return await workspace.resolve(...args) } }

  t.strictSame(await readWorkspaceTemplates(spying, 'templatez', log), [])
  t.strictSame(asked, [false], 'a missing folder is not an error to explain')
  // The same path as a tool argument is explained: the scan is what the templates lookup skips.
  await t.rejects(workspace.resolve('templatez'), /did you mean: templates/)
})
