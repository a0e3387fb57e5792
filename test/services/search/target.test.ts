import t from 'tap'
import { pinTarget } from '../../../src/services/search/target.js'
import type { PinnedPath, ResolvedPath, WorkspaceService } from '../../../src/services/workspace/workspace.js'

// pinTarget holds an open descriptor (the pinned folder) while it reads the ignore rules of the folders
// above the target. If reading them fails (a cancelled call, an unreadable rule file), the descriptor
// must be closed before the error goes on: a leaked descriptor per failed search adds up on a server.

t.test('reading the ancestor rules fails: the pinned folder is closed and the error is the caller\'s', async (t) => {
  let closed = 0
  const pinned = { isDirectory: true, procPath: '/proc/self/fd/99', close: async () => { closed++ } } as unknown as PinnedPath
  const failure = new Error('the call was cancelled')
  const workspace = {
    pin: async () => pinned,
    readText: async () => { throw failure }
  } as unknown as WorkspaceService
  const resolved = { relative: 'src/deep', base: 'src/deep/' } as unknown as ResolvedPath

  await t.rejects(pinTarget({ workspace, resolved, path: 'src/deep' }, true), failure)
  t.equal(closed, 1, 'the descriptor was closed once')
})

t.test('a folder target maps ripgrep\'s paths to the agent\'s and passes back only names it can spell', async (t) => {
  const pinned = { isDirectory: true, procPath: '/proc/self/fd/99', close: async () => {} } as unknown as PinnedPath
  const workspace = { pin: async () => pinned, readText: async () => undefined } as unknown as WorkspaceService
  const target = await pinTarget({ workspace, resolved: { relative: 'src', base: 'src/' } as unknown as ResolvedPath, path: 'src' }, true)
  t.teardown(() => target.close())

  t.equal(target.toRelative('a/b.ts'), 'src/a/b.ts')
  t.equal(target.operand('src/a/b.ts'), './a/b.ts', 'a file below the folder is named relative to it')
  t.equal(target.operand('lib/c.ts'), undefined, 'a file elsewhere is not passed')
  t.equal(target.operand('src/\\xff.txt'), undefined, 'a name that is not UTF-8 cannot be an argument')
})

t.test('a file target is its /proc path, and is the only file it passes back', async (t) => {
  const pinned = { isDirectory: false, procPath: '/proc/self/fd/98', close: async () => {} } as unknown as PinnedPath
  const workspace = { pin: async () => pinned } as unknown as WorkspaceService
  const target = await pinTarget({ workspace, resolved: { relative: 'src/a.ts' } as unknown as ResolvedPath, path: 'src/a.ts' }, false)
  t.teardown(() => target.close())

  t.same({ named: target.named, cwd: target.cwd, paths: target.paths }, { named: true, cwd: '/', paths: ['/proc/self/fd/98'] })
  t.equal(target.toRelative('/proc/self/fd/98'), 'src/a.ts')
  t.equal(target.operand('src/a.ts'), '/proc/self/fd/98')
  t.equal(target.operand('src/b.ts'), undefined)
})
