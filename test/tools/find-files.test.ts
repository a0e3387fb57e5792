import t from 'tap'
import { findFiles } from '../../src/tools/find-files.js'
import { hostileServices, textOf, toolCodeOf, toolContext } from '../helpers/workspace-fixture.js'

const paths = (sc: unknown): string[] => (sc as { files: string[] }).files

t.test('globs match at any depth, sorted by path, ignore rules and hidden files respected', async (t) => {
  const fx = await hostileServices(t, { big: false })

  const result = await findFiles.run({ workspace: fx.workspace, patterns: ['*.ts'] }, toolContext())

  t.notOk(result.isError)
  t.same(paths(result.structuredContent), ['src/app.ts', 'src/index.ts', 'src/util/helpers.test.ts', 'src/util/helpers.ts'])
  t.match(textOf(result), /^# 4 files match \["\*\.ts"\] under \. \(by path\)\nsrc\/app\.ts {2}\d+ B/)
  t.match(textOf(result), /Results 1–4 of 4 \| next: none$/)

  const txt = await findFiles.run({ workspace: fx.workspace, patterns: ['*.txt', '*.log', '*.js'] }, toolContext())
  const found = paths(txt.structuredContent)
  t.ok(found.includes('nested/keep.txt'))
  t.ok(found.includes('-dash.txt'))
  t.ok(found.includes('with space.txt'))
  t.ok(found.includes('bad-\\xff\\xfe.txt'))
  t.notOk(found.some(p => p.startsWith('build/') || p.startsWith('scratch/') || p.startsWith('node_modules/') || p === 'ignored.log'))

  const all = await findFiles.run({ workspace: fx.workspace, patterns: ['*.txt', '*.log', '*.json'], include_hidden: true, respect_gitignore: false }, toolContext())
  const every = paths(all.structuredContent)
  t.ok(every.includes('ignored.log') && every.includes('scratch/notes.txt') && every.includes('.hidden/config.json'))
})

t.test('path scopes the search; slash globs match relative to path or root; exclude prunes', async (t) => {
  const fx = await hostileServices(t, { big: false })

  const scoped = await findFiles.run({ workspace: fx.workspace, patterns: ['util/*.ts'], path: 'src' }, toolContext())
  t.same(paths(scoped.structuredContent), ['src/util/helpers.test.ts', 'src/util/helpers.ts'])
  const rooted = await findFiles.run({ workspace: fx.workspace, patterns: ['src/**/*.ts'], exclude: ['**/util/**'] }, toolContext())
  t.same(paths(rooted.structuredContent), ['src/app.ts', 'src/index.ts'])
  const tests = await findFiles.run({ workspace: fx.workspace, patterns: ['**/*.ts'], exclude: ['*.test.ts'] }, toolContext())
  t.notOk(paths(tests.structuredContent).includes('src/util/helpers.test.ts'))
})

t.test('links are listed, never followed, so loops and outside dirs add nothing', async (t) => {
  const fx = await hostileServices(t, { big: false })

  const result = await findFiles.run({ workspace: fx.workspace, patterns: ['**/*'] }, toolContext())
  const found = paths(result.structuredContent)

  t.ok(found.includes('link-to-secret'))
  t.ok(found.includes('loopdir/up'))
  t.notOk(found.some(p => p.includes('secret.txt') || p.includes('inner.txt')))
  t.notMatch(textOf(result), fx.canary)
  t.notMatch(textOf(result), fx.base)
})

t.test('pagination and sort by mtime', async (t) => {
  const fx = await hostileServices(t, { big: false })

  const first = await findFiles.run({ workspace: fx.workspace, patterns: ['*'], page_size: 3 }, toolContext())
  t.match(first.structuredContent, { pagination: { offset: 0, returned: 3, has_more: true, next_offset: 3 } })
  t.match(textOf(first), /next: find_files patterns=\["\*"\] path="\." page_size=3 offset=3$/)
  const byTime = await findFiles.run({ workspace: fx.workspace, patterns: ['*.ts'], sort: 'mtime' }, toolContext())
  t.equal(paths(byTime.structuredContent).length, 4)
  t.match(textOf(byTime), /\d{4}-\d\d-\d\dT/)
})

t.test('bad globs and paths are tool errors', async (t) => {
  const fx = await hostileServices(t, { big: false })
  const run = (args: Record<string, unknown>) => toolCodeOf(Promise.resolve().then(() => findFiles.run({ workspace: fx.workspace, patterns: ['*'], ...args } as never, toolContext())))

  t.equal(await run({ patterns: ['[abc'] }), 'INVALID_GLOB')
  t.equal(await run({ patterns: ['{a,b'] }), 'INVALID_GLOB')
  t.equal(await run({ patterns: ['../outside/*'] }), 'INVALID_GLOB')
  t.equal(await run({ patterns: ['/etc/*'] }), 'INVALID_GLOB')
  t.equal(await run({ exclude: ['a(b'] }), 'INVALID_GLOB')
  t.equal(await run({ patterns: Array.from({ length: 21 }, (_, i) => `*.${i}`) }), 'TOO_MANY_ITEMS')
  t.equal(await run({ path: '../outside' }), 'PATH_OUTSIDE_ROOT')
  t.equal(await run({ path: 'link-to-outside-dir' }), 'SYMLINK_ESCAPES_ROOT')
  t.equal(await run({ path: 'README.md' }), 'NOT_A_DIRECTORY')
})
