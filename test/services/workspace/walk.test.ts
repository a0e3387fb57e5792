import t, { type Test } from 'tap'
import fs from 'node:fs'
import path from 'node:path'
import pino from 'pino'
import { walkTree } from '../../../src/services/workspace/walk.js'
import { createWorkspace, type WorkspaceService } from '../../../src/services/workspace/workspace.js'
import { waitUntil } from '../../helpers/wait.js'

// Walks over a real tree, with a workspace whose listing of chosen folders fails the way a file
// system does (permissions, a folder removed or swapped while listing, an I/O error).

const log = pino({ level: 'silent' })

async function tree (t: Test): Promise<{ root: string, ws: WorkspaceService }> {
  const root = fs.realpathSync(t.testdir({
    a: { 'one.txt': '1', deep: { 'two.txt': '2' } },
    denied: { 'x.txt': 'x' },
    removed: { 'x.txt': 'x' },
    swapped: { 'x.txt': 'x' },
    broken: { 'x.txt': 'x' },
    odd: { 'x.txt': 'x' },
    'z.txt': 'z'
  }))
  return { root, ws: await createWorkspace({ root, log }) }
}

/** The workspace, but listing `failing[relative]` throws an error with that code (or none). */
function failingListings (ws: WorkspaceService, failing: Record<string, string | undefined>): WorkspaceService {
  return {
    ...ws,
    async readDirectory (dir) {
      if (dir.relative in failing) {
        const code = failing[dir.relative]
        throw code === undefined ? new Error('odd failure') : Object.assign(new Error(code), { code })
      }
      return await ws.readDirectory(dir)
    }
  }
}

const options = { maxDepth: 5, includeHidden: true, respectGitignore: false, maxEntries: 1000 }

t.test('a subfolder that cannot be listed is noted, marked, and the walk goes on', async (t) => {
  const { ws } = await tree(t)
  const flaky = failingListings(ws, { denied: 'EACCES', removed: 'ENOENT', swapped: 'ESCAPED', broken: 'EIO', odd: undefined })

  const result = await walkTree(flaky, { ...options, start: await ws.resolve('.') })

  t.strictSame(result.notes.sort(), [
    'broken/: not readable (EIO); its entries are not listed',
    'denied/: permission denied; its entries are not listed',
    'odd/: not readable (error); its entries are not listed',
    'removed/: removed while listing; its entries are not listed',
    'swapped/: replaced by a link out of the workspace while listing; not followed; its entries are not listed'
  ])
  t.equal(result.entries.find(e => e.relative === 'denied')?.unreadable, 'permission denied')
  t.ok(result.entries.some(e => e.relative === 'a/deep/two.txt'), 'the rest is walked')
})

t.test('the folder the caller named must be listable: its failure is the tool error', async (t) => {
  const { ws } = await tree(t)
  const flaky = failingListings(ws, { denied: 'EACCES' })

  const err = await walkTree(flaky, { ...options, start: await ws.resolve('denied') }).catch((e: { toolCode?: string }) => e)

  t.match(err, { toolCode: 'PERMISSION_DENIED' })
})

t.test('at the depth limit an unreadable folder has no count, but says why', async (t) => {
  const { ws } = await tree(t)
  const flaky = failingListings(ws, { denied: 'EACCES' })

  const result = await walkTree(flaky, { ...options, maxDepth: 1, countAtLimit: true, start: await ws.resolve('.') })

  t.match(result.entries.find(e => e.relative === 'denied'), { childCount: undefined, unreadable: 'permission denied' })
  t.match(result.entries.find(e => e.relative === 'a'), { childCount: 2 })
})

t.test('an entry removed between the listing and its lstat is kept, with an unknown size', async (t) => {
  const { root, ws } = await tree(t)
  const ghost: WorkspaceService = {
    ...ws,
    async readDirectory (dir) {
      const entries = await ws.readDirectory(dir)
      return dir.relative === '.' ? [...entries, { name: 'ghost.txt', relative: 'ghost.txt', fsPath: path.join(root, 'ghost.txt'), kind: 'file' }] : entries
    }
  }

  const result = await walkTree(ghost, { ...options, maxDepth: 1, start: await ws.resolve('.') })

  t.match(result.entries.find(e => e.relative === 'ghost.txt'), { size: -1, mtimeMs: 0 })
})

t.test('a walk stopped by its signal says why, by the abort reason\'s name', async (t) => {
  const { ws } = await tree(t)
  const start = await ws.resolve('.')
  const timedOut = new AbortController()
  timedOut.abort(new DOMException('deadline', 'TimeoutError'))
  const plain = new AbortController()
  plain.abort('no reason object')

  const byTimeout = await walkTree(ws, { ...options, start, signal: timedOut.signal })
  const byString = await walkTree(ws, { ...options, start, signal: plain.signal })

  t.match(byTimeout.notes, ['stopped early (TimeoutError); results are partial'])
  t.match(byString.notes, ['stopped early (aborted); results are partial'])
})

t.test('the entry cap reached inside a subfolder ends the whole walk at once', async (t) => {
  const { ws } = await tree(t)

  const result = await walkTree(ws, { ...options, maxEntries: 3, start: await ws.resolve('.'), order: (x, y) => x.relative < y.relative ? -1 : 1 })

  t.strictSame(result.entries.map(e => e.relative), ['a', 'a/deep', 'a/deep/two.txt'])
  t.equal(result.truncated, true)
  t.match(result.notes, ['stopped after 3 entries; narrow path or patterns for the rest'])
})

t.test('read-ahead: folders listed out of order still give a pre-order walk, counts and first examples in walk order', async (t) => {
  const root = fs.realpathSync(t.testdir({
    '.gitignore': '*.log\n',
    a: { deep: { deeper: { 'first.log': 'x', 'keep.txt': 'k' } } },
    b: { 'second.log': 'x', '.hidden': 'h', 'b.txt': 'b' },
    c: { 'third.log': 'x' }
  }))
  const ws = await createWorkspace({ root, log })
  // The deep folder answers last: only once the read-ahead has listed b and c (with their ignored files).
  const listed = new Set<string>()
  const slow: WorkspaceService = {
    ...ws,
    async readDirectory (dir) {
      if (dir.relative === 'a/deep/deeper') await waitUntil(() => listed.has('b') && listed.has('c'), 'the read-ahead to list b and c')
      const entries = await ws.readDirectory(dir)
      listed.add(dir.relative)
      return entries
    }
  }
  const order = (x: { relative: string }, y: { relative: string }): number => x.relative < y.relative ? -1 : 1
  const result = await walkTree(slow, { ...options, includeHidden: false, respectGitignore: true, start: await ws.resolve('.'), order })
  t.strictSame(result.entries.map(e => e.relative), ['a', 'a/deep', 'a/deep/deeper', 'a/deep/deeper/keep.txt', 'b', 'b/b.txt', 'c'])
  t.match(result, { skippedIgnored: 3, skippedHidden: 2, firstIgnoredFile: { relative: 'a/deep/deeper/first.log' } }, 'the first ignored file in walk order, not the first one read')
})

t.test('read-ahead: a folder read ahead but never reached — cap hit first — fails nothing, even when its reading throws', async (t) => {
  const { ws } = await tree(t)
  let thrown = 0
  const throwing: WorkspaceService = {
    ...ws,
    async isIgnoredEntry (parent, name, isDirectory) {
      if (parent === 'odd') {
        thrown++
        throw new Error('rules unreadable')
      }
      return await ws.isIgnoredEntry(parent, name, isDirectory)
    }
  }
  const order = (x: { relative: string }, y: { relative: string }): number => x.relative < y.relative ? -1 : 1
  const start = await ws.resolve('.')
  const capped = await walkTree(throwing, { ...options, respectGitignore: true, maxEntries: 2, start, order })
  t.strictSame(capped.entries.map(e => e.relative), ['a', 'a/deep'])
  await waitUntil(() => thrown > 0, 'the read-ahead to reach odd and fail')
  // A turn for a rejection nobody handled to be reported (tap fails the file on one).
  await new Promise(resolve => setImmediate(resolve))
  await t.rejects(walkTree(throwing, { ...options, respectGitignore: true, start, order }), /rules unreadable/, 'reached, the failure is the walk\'s')
})

t.test('statDirs false: folders are walked but their metadata is not read; files keep theirs', async (t) => {
  const { ws } = await tree(t)
  const statted: string[] = []
  const counting: WorkspaceService = { ...ws, entryStats: async (entries) => { statted.push(...entries.map(e => (e as { relative: string }).relative)); return await ws.entryStats(entries) } }

  const result = await walkTree(counting, { ...options, statDirs: false, start: await ws.resolve('.') })

  t.match(result.entries.find(e => e.relative === 'a/deep'), { kind: 'dir', size: -1, mtimeMs: 0 })
  t.match(result.entries.find(e => e.relative === 'a/deep/two.txt'), { kind: 'file', size: 1 })
  t.ok(result.entries.some(e => e.relative === 'a/deep/two.txt'), 'folders are still walked into')
  t.notOk(statted.some(relative => fs.statSync(path.join(ws.root, relative)).isDirectory()), 'no folder was statted')
  const full = await walkTree(ws, { ...options, start: await ws.resolve('.') })
  t.ok((full.entries.find(e => e.relative === 'a/deep')?.mtimeMs ?? 0) > 0, 'by default folders have their metadata')
})
