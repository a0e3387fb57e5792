import t from 'tap'
import fs from 'node:fs'
import path from 'node:path'
import pino from 'pino'
import { suggestPaths } from '../../../src/services/workspace/suggest.js'
import { editDistance } from '../../../src/services/edit-distance.js'
import { createWorkspace } from '../../../src/services/workspace/workspace.js'

// Did-you-mean: close in-root names, nearest first, within fixed bounds however big the tree.

const log = pino({ level: 'silent' })

t.test('editDistance is Levenshtein within the limit and limit + 1 beyond it', async (t) => {
  t.equal(editDistance('kitten', 'sitting'), 3)
  t.equal(editDistance('same', 'same'), 0)
  t.equal(editDistance('abc', 'abcdefgh', 2), 3, 'lengths too far apart: no table at all')
  t.equal(editDistance('abcdef', 'uvwxyz', 2), 3, 'stops once a whole row is over the limit')
  t.equal(editDistance('ab', 'ba', 5), 2)
})

t.test('close names come nearest first; equally near ones by path order', async (t) => {
  const root = fs.realpathSync(t.testdir({
    'config.ts': '',
    'config.js': '',
    'confid.ts': '',
    src: { 'config.tsx': '' },
    'unrelated.md': '',
    '.cache': { 'config.ts': '' },
    node_modules: { 'config.ts': '' }
  }))
  const ws = await createWorkspace({ root, log })

  const got = await suggestPaths(ws, 'config.ts', { limit: 10 })

  t.strictSame(got.slice(0, 3), ['config.ts', 'confid.ts', 'config.js'], 'exact first, then the two one edit away, by path')
  t.ok(got.includes('src/config.tsx'))
  t.notOk(got.includes('unrelated.md'))
  t.notOk(got.some(p => p.startsWith('.cache/') || p.startsWith('node_modules/')), 'hidden folders and node_modules are not searched')
})

t.test('equal scores are ordered by path, so the answer never depends on the directory order', async (t) => {
  const root = fs.realpathSync(t.testdir({ 'notes.txt': '', 'notes.md': '', 'notes.js': '' }))
  const ws = await createWorkspace({ root, log })

  t.strictSame(await suggestPaths(ws, 'notes.rs'), ['notes.js', 'notes.md', 'notes.txt'])
})

t.test('a close folder is suggested as a folder; candidates are capped before ranking', async (t) => {
  const files = Object.fromEntries(Array.from({ length: 80 }, (_, i) => [`report${i}.csv`, '']))
  const many = fs.realpathSync(t.testdir({ many: files, one: { 'reports.csv': { 'x.txt': '' } } }))
  const ws = await createWorkspace({ root: path.join(many, 'many'), log })
  const single = await createWorkspace({ root: path.join(many, 'one'), log })

  t.equal((await suggestPaths(ws, 'reports.csv', { limit: 100 })).length, 64, 'at most 64 close names are ranked')
  t.strictSame(await suggestPaths(single, 'report.csv'), ['reports.csv/'], 'a folder ends with a slash')
})

t.test('the scan stops at its entry bound, even in the middle of a level', async (t) => {
  const root = fs.realpathSync(t.testdir({ aaa: {}, zzz: { 'wanted.txt': '' } }))
  for (let i = 0; i < 5100; i++) fs.writeFileSync(path.join(root, 'aaa', `f${i}`), '')
  const ws = await createWorkspace({ root, log })

  const got = await suggestPaths(ws, 'wanted.txt')

  t.strictSame(got, [], 'zzz/ was never reached: 5,000 entries of aaa/ used the budget')
})

t.test('no suggestions for an empty or over-long name, or once the call is aborted', async (t) => {
  const root = fs.realpathSync(t.testdir({ 'a.txt': '' }))
  const ws = await createWorkspace({ root, log })
  const aborted = new AbortController()
  aborted.abort()

  t.strictSame(await suggestPaths(ws, 'dir/'), [])
  t.strictSame(await suggestPaths(ws, 'x'.repeat(129)), [])
  t.strictSame(await suggestPaths(ws, 'a.txt', { signal: aborted.signal }), [])
})
