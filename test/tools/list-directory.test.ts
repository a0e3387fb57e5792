import t from 'tap'
import { listDirectory } from '../../src/tools/list-directory.js'
import { hostileServices, textOf, toolCodeOf, toolContext } from '../helpers/workspace-fixture.js'

t.test('lists the root: dirs first, sizes, links with targets, hidden and ignored entries left out', async (t) => {
  const fx = await hostileServices(t, { big: false })

  const result = await listDirectory.run({ workspace: fx.workspace }, toolContext())
  const text = textOf(result)

  t.notOk(result.isError)
  t.match(text, /^# \. — \d+ entries \(depth 1, by name, directories first\)/)
  t.match(text, /\nsrc\/ {2}\(3 entries\)/)
  t.match(text, /\nREADME\.md {2}\d+ B/)
  t.match(text, /\nlink-inside -> src\/index\.ts/)
  t.match(text, /\nlink-inside-dir -> src\//)
  t.match(text, /\nlink-to-secret -> \[link, outside workspace\]/)
  t.match(text, /\nlink-to-outside-dir -> \[link, outside workspace\]/)
  t.match(text, /\nloop-a -> \[link, loop\]/)
  t.match(text, /\nlink-dangling -> \[link, broken\]/)
  t.match(text, /\nbuild\/ {2}\(ignored, not expanded\)/)
  t.match(text, /\nfifo {2}\[fifo\]/)
  t.match(text, /\n-dash\.txt {2}/)
  t.match(text, /\nbad-\\xff\\xfe\.txt {2}/)
  t.notMatch(text, /\n(\.env|\.hidden|ignored\.log)/, 'hidden and ignored entries are not listed')
  t.match(text, /\nNote: 1 gitignored entry not shown and 3 ignored folders not expanded \(e\.g\. ignored\.log, by \.gitignore:\d+ "[^"]+"\) — to include them: list_directory path="\." respect_gitignore=false\n/)
  t.notMatch(text, fx.canary)
  t.notMatch(text, fx.base)
  const firstFile = text.split('\n').findIndex(l => / {2}\d+ B$/.test(l))
  const lastDir = text.split('\n').findLastIndex(l => /^[^ ]+\/( |$)/.test(l))
  t.ok(lastDir < firstFile, 'directories come first')
  t.match(result.structuredContent, { path: '.', pagination: { offset: 0, has_more: false, next_offset: -1 } })
})

t.test('depth, hidden and gitignore switches', async (t) => {
  const fx = await hostileServices(t, { big: false })

  const deep = textOf(await listDirectory.run({ workspace: fx.workspace, path: 'src', depth: 2 }, toolContext()))
  t.match(deep, /\nsrc\/util\/\n {2}helpers\.test\.ts {2}\d+ B\n {2}helpers\.ts {2}/)
  const all = textOf(await listDirectory.run({ workspace: fx.workspace, include_hidden: true, respect_gitignore: false }, toolContext()))
  t.match(all, /\n\.env {2}/)
  t.match(all, /\nignored\.log {2}/)
  t.match(all, /\n.git\/ {2}\(1 entry\)/)
  const nested = textOf(await listDirectory.run({ workspace: fx.workspace, path: 'nested' }, toolContext()))
  t.match(nested, /nested\/keep\.txt/)
  t.notMatch(nested, /\nnested\/a\.tmp {2}/, 'the ignored file is not listed (the note may name it)')
})

t.test('pagination is deterministic and the footer names the exact next call', async (t) => {
  const fx = await hostileServices(t, { big: false })

  const first = await listDirectory.run({ workspace: fx.workspace, page_size: 5 }, toolContext())
  const second = await listDirectory.run({ workspace: fx.workspace, page_size: 5, offset: 5 }, toolContext())
  const again = await listDirectory.run({ workspace: fx.workspace, page_size: 5, offset: 5 }, toolContext())

  t.match(first.structuredContent, { pagination: { offset: 0, returned: 5, has_more: true, next_offset: 5 } })
  t.match(textOf(first), /Entries 1–5 of \d+ \| next: list_directory path="\." page_size=5 offset=5$/)
  t.same(second.structuredContent, again.structuredContent)
  const a = (first.structuredContent as { entries: string[] }).entries
  const b = (second.structuredContent as { entries: string[] }).entries
  t.equal(new Set([...a, ...b]).size, 10, 'pages do not overlap')
})

t.test('errors: file, outside, escaping link, missing', async (t) => {
  const fx = await hostileServices(t, { big: false })
  const run = (path: string) => toolCodeOf(Promise.resolve(listDirectory.run({ workspace: fx.workspace, path }, toolContext())))

  t.equal(await run('README.md'), 'NOT_A_DIRECTORY')
  t.equal(await run('../outside'), 'PATH_OUTSIDE_ROOT')
  t.equal(await run(fx.outside), 'PATH_OUTSIDE_ROOT')
  t.equal(await run('link-to-outside-dir'), 'SYMLINK_ESCAPES_ROOT')
  t.equal(await run('link-to-evil'), 'SYMLINK_ESCAPES_ROOT')
  t.equal(await run('srcc'), 'PATH_NOT_FOUND')
  t.equal(await run('loopdir/up/loopdir/up'), 'ok', 'an in-root link to an ancestor resolves to the root')
})

t.test('a link loop inside a listed folder is shown, not followed', async (t) => {
  const fx = await hostileServices(t, { big: false })

  const text = textOf(await listDirectory.run({ workspace: fx.workspace, path: 'loopdir', depth: 5 }, toolContext()))

  t.match(text, /loopdir\/up -> \.\//)
  t.equal(text.split('\n').filter(l => l.startsWith('loopdir/')).length, 1)
})
