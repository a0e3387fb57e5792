// list_directory and find_files over every option and edge a client can reach: sort orders and their
// ties, deep pages that start inside a folder, empty folders, pages past the end, a call stopped
// before it walked, invalid globs, and the no-match notice for each combination of switches.
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import t, { type Test } from 'tap'
import pino from 'pino'
import { createWorkspace } from '../../src/services/workspace/workspace.js'
import { listDirectory } from '../../src/tools/list-directory.js'
import { findFiles } from '../../src/tools/find-files.js'
import { textOf, toolCodeOf, toolContext } from '../helpers/workspace-fixture.js'

async function tree (t: Test) {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'wmcp-walk-')))
  t.teardown(() => fs.rmSync(root, { recursive: true, force: true }))
  const write = (file: string, text: string, mtime: number) => {
    fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true })
    fs.writeFileSync(path.join(root, file), text)
    fs.utimesSync(path.join(root, file), mtime, mtime)
  }
  write('a/b/c/deep.txt', 'd', 1_700_000_300)
  write('a/b/c/deeper.txt', 'dd', 1_700_000_300)
  write('small.txt', 'x', 1_700_000_100)
  write('large.txt', 'x'.repeat(100), 1_700_000_200)
  write('same-a.txt', 'y'.repeat(50), 1_700_000_200)
  write('epoch.txt', 'e', 0)
  write('.hidden/secret.md', 's', 1_700_000_000)
  fs.mkdirSync(path.join(root, 'empty'))
  fs.writeFileSync(path.join(root, '.gitignore'), '*.log\n')
  write('debug.log', 'l', 1_700_000_000)
  const workspace = await createWorkspace({ root, log: pino({ level: 'silent' }) })
  return { root, workspace }
}

t.test('list_directory sorts by size and mtime (ties by name), shows no time for an epoch mtime, and says (empty)', async (t) => {
  const { workspace } = await tree(t)
  const lines = async (args: Record<string, unknown>) => textOf(await listDirectory.run({ workspace, ...args }, toolContext())).split('\n')

  const bySize = (await lines({ sort: 'size' })).filter(l => l.endsWith(' B'))
  t.strictSame(bySize.map(l => l.split(' ')[0]), ['large.txt', 'same-a.txt', 'epoch.txt', 'small.txt'], 'largest first, equal sizes by name')
  const byTime = (await lines({ sort: 'mtime' })).filter(l => / B {2}|\d B$/.test(l))
  t.strictSame(byTime.map(l => l.split(' ')[0]), ['large.txt', 'same-a.txt', 'small.txt', 'epoch.txt'], 'newest first, equal times by name')
  t.match(byTime[0], /^large\.txt {2}100 B {2}2023-11-14T\d\d:\d\d:\d\d\.\d{3}Z$/)
  t.equal(byTime[3], 'epoch.txt  1 B', 'an mtime of 0 is not a time worth printing')
  t.strictSame((await lines({ path: 'empty' })).slice(1, 2), ['(empty)'])
})

t.test('list_directory: a deep page starts with every folder it is inside, a page past the end says where the end is', async (t) => {
  const { workspace } = await tree(t)

  const page = textOf(await listDirectory.run({ workspace, path: 'a', depth: 3, page_size: 1, offset: 3 }, toolContext())).split('\n')
  t.strictSame(page.slice(1, 4), ['a/b/  (continued)', '  c/  (continued)', '    deeper.txt  2 B'])
  t.match(page.at(-1), /^Entries 4–4 of 4 \| next: none$/)

  const past = textOf(await listDirectory.run({ workspace, offset: 50, sort: 'size', page_size: 5 }, toolContext()))
  t.match(past, /Note: offset 50 is past the end \(\d+ entries\); use offset=0/)
  t.match(past, /Entries 0 of \d+ \| next: none$/)
})

t.test('a call whose signal has already fired lists what it walked and says the total is a lower bound', async (t) => {
  const { workspace } = await tree(t)
  const stopped = new AbortController()
  stopped.abort(new Error('deadline'))

  const listing = textOf(await listDirectory.run({ workspace }, toolContext(stopped.signal)))
  const found = textOf(await findFiles.run({ workspace, patterns: ['*.txt'] }, toolContext(stopped.signal)))

  t.match(listing, /^# \. — 0\+ entries /)
  t.match(listing, /stopped early .*results are partial/)
  t.match(found, /^# 0\+ files match /)
})

t.test('find_files refuses empty, control-character, absolute and parent globs naming the index', async (t) => {
  const { workspace } = await tree(t)
  const code = (patterns: string[]) => toolCodeOf(findFiles.run({ workspace, patterns }, toolContext()))
  const message = async (patterns: string[]) => {
    try { await findFiles.run({ workspace, patterns }, toolContext()) } catch (err) { return (err as Error).message }
    return 'ok'
  }

  t.equal(await code(['  ']), 'INVALID_GLOB')
  t.match(await message(['*.ts', '']), /patterns\[1\] "" is empty/)
  t.match(await message(['a\u0007b']), /patterns\[0\] "a\\u0007b" contains a control character/)
  t.match(await message(['/etc/*']), /must be relative to path, without "\.\." or a leading "\/"/)
  t.match(await message(['../*']), /must be relative to path/)
  t.equal(await code(['[unclosed']), 'INVALID_GLOB')
})

t.test('find_files: the no-match notice names only the switches still on; sort and paging footers', async (t) => {
  const { workspace } = await tree(t)
  const run = async (args: Record<string, unknown>) => textOf(await findFiles.run({ workspace, patterns: [], ...args } as Parameters<typeof findFiles.run>[0], toolContext()))

  t.match(await run({ patterns: ['*.none'] }), /Note: no match; hidden files \(include_hidden=true\) and gitignored files \(respect_gitignore=false\) are skipped/)
  t.match(await run({ patterns: ['*.none'], include_hidden: true, respect_gitignore: false }), /Note: no match; check the globs/)
  t.match(await run({ patterns: ['*.md'], include_hidden: true }), /\n\.hidden\/secret\.md {2}1 B\n/)
  const newest = await run({ patterns: ['*.txt'], sort: 'mtime', page_size: 2 })
  t.match(newest, /^# 6 files match \["\*\.txt"\] under \. \(by mtime\)\na\/b\/c\/deep\.txt {2}1 B {2}2023-/)
  t.match(newest, /next: find_files patterns=\["\*\.txt"\] path="\." sort="mtime" page_size=2 offset=2$/)
  t.match(await run({ patterns: ['*.txt'], offset: 99 }), /Note: offset 99 is past the end \(6 matches\); use offset=0/)
  t.match(await run({ patterns: ['*.txt'], path: 'a', exclude: ['**/deeper.txt'] }), /^# 1 file matches \["\*\.txt"\] under a/)
})
