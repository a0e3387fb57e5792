import t from 'tap'
import { createIgnoreRules } from '../../../src/services/workspace/ignore-rules.js'

// The rule reader over an in-memory tree of rule files (the workspace supplies the real, jailed reader).

const reader = (files: Record<string, string>) => async (dir: string, name: string): Promise<string | undefined> => files[`${dir}/${name}`]

t.test('a deeper rule file can re-include what a shallower one ignores, and ignore it again', async (t) => {
  const rules = createIgnoreRules(reader({ './.gitignore': '*.log\nbuild/\n', 'keep/.gitignore': '!important.log\n', 'keep/deeper/.ignore': 'important.log\n', 'build/out/.gitignore': '!*.js\n' }))

  t.equal(await rules.isIgnored('debug.log', false), true)
  t.equal(await rules.isIgnored('keep/important.log', false), false, 'un-ignored by the nested rule')
  t.equal(await rules.isIgnored('keep/other.log', false), true)
  t.equal(await rules.isIgnored('keep/deeper/important.log', false), true, 'the deepest decisive rule wins')
  t.equal(await rules.isIgnored('keep/deeper/notes.txt', false), false)
  t.equal(await rules.isIgnored('build/out/app.js', false), true, 'nothing below an ignored folder can be re-included, as in git')
})

t.test('rules are read once per folder and again after their TTL', async (t) => {
  let reads = 0
  let clock = 0
  const rules = createIgnoreRules(async () => { reads++; return '*.tmp\n' }, () => clock)

  await rules.isIgnored('a.tmp', false)
  await rules.isIgnored('b.tmp', false)
  const cached = reads
  clock += 60 * 60 * 1000
  await rules.isIgnored('c.tmp', false)

  t.equal(cached, 2, 'the root\'s two rule files, once')
  t.equal(reads, 4, 'read again once stale')
})

t.test('the per-folder cache is bounded: past 10,000 folders it starts over', async (t) => {
  let reads = 0
  const rules = createIgnoreRules(async () => { reads++; return undefined })

  for (let i = 0; i <= 10_001; i++) await rules.isIgnoredEntry(`d${i}`, 'x', false)
  const before = reads
  await rules.isIgnoredEntry('d0', 'x', false)

  t.ok(reads > before, 'an early folder was dropped with the rest and is read again')
})

t.test('the root, an empty path and a .git folder: never ignored, never ignored, always ignored', async (t) => {
  const rules = createIgnoreRules(reader({ './.gitignore': '*\n' }))

  t.equal(await rules.isIgnored('.', true), false)
  t.equal(await rules.isIgnored('', true), false)
  t.equal(await rules.isIgnoredEntry('', '.git', true), true)
  t.equal(await rules.isIgnoredEntry('sub', 'file', false), true, 'an entry below a folder, by its parent\'s path')
})

t.test('a folder\'s chain of rule sets is reused for its entries, and rebuilt once one of its rule files is stale', async (t) => {
  let clock = 0
  const files: Record<string, string> = { './.gitignore': '*.tmp\n', 'sub/.ignore': '*.log\n' }
  const rules = createIgnoreRules(reader(files), () => clock)

  t.equal(await rules.isIgnoredEntry('sub', 'a.tmp', false), true, 'the root\'s rule')
  t.equal(await rules.isIgnoredEntry('sub', 'a.log', false), true, 'the folder\'s own rule')
  files['./.gitignore'] = ''
  clock += 1000
  t.equal(await rules.isIgnoredEntry('sub', 'b.tmp', false), true, 'within the TTL the chain stands')
  clock += 1000
  t.equal(await rules.isIgnoredEntry('sub', 'b.tmp', false), false, 'past it, the changed rule file is read again')
  t.equal(await rules.isIgnoredEntry('sub', 'b.log', false), true)
})

t.test('a listing without rule files spares their reads; it never overrides rules just read', async (t) => {
  let clock = 0
  const asked: string[] = []
  const files: Record<string, string> = { 'kept/.gitignore': '*.tmp\n' }
  const rules = createIgnoreRules(async (dir, name) => { asked.push(`${dir}/${name}`); return files[`${dir}/${name}`] }, () => clock)

  rules.noRuleFilesIn('bare')
  t.equal(await rules.isIgnoredEntry('bare', 'a.tmp', false), false)
  t.notOk(asked.some(a => a.startsWith('bare/')), 'no rule file of the listed folder was opened')

  t.equal(await rules.isIgnoredEntry('kept', 'a.tmp', false), true)
  rules.noRuleFilesIn('kept')
  t.equal(await rules.isIgnoredEntry('kept', 'b.tmp', false), true, 'rules read a moment ago stand')
  clock += 2000
  rules.noRuleFilesIn('kept')
  t.equal(await rules.isIgnoredEntry('kept', 'c.tmp', false), false, 'a later listing without the file is believed')
})
