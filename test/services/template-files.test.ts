import t from 'tap'
import fs from 'node:fs'
import path from 'node:path'
import pino from 'pino'
import { readPackageTemplates, readWorkspaceTemplates } from '../../src/services/template-files.js'
import { createWorkspace } from '../../src/services/workspace.js'

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
