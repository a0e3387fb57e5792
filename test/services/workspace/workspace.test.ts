import t, { type Test } from 'tap'
import path from 'node:path'
import pino from 'pino'
import { createWorkspace, type WorkspaceService } from '../../../src/services/workspace/workspace.js'
import { createHostileWorkspace, toolCodeOf } from '../../helpers/workspace-fixture.js'

const log = pino({ level: 'silent' })

async function setup (t: Test) {
  const fx = createHostileWorkspace(t, { big: false })
  const ws = await createWorkspace({ root: fx.root, log })
  return { fx, ws }
}

/** Resolves and returns the tool code it failed with (or 'ok'). */
async function codeOf (ws: WorkspaceService, p: string, mustExist = true): Promise<string> {
  try {
    await ws.resolve(p, { mustExist })
    return 'ok'
  } catch (err) {
    return (err as { toolCode?: string }).toolCode ?? String(err)
  }
}

t.test('resolve: in-root paths, absolute inside, file:// and odd names', async (t) => {
  const { fx, ws } = await setup(t)

  t.equal(ws.root, fx.root)
  t.match(await ws.resolve('.'), { relative: '.', fsPath: fx.root })
  t.match(await ws.resolve(''), { relative: '.' })
  t.match(await ws.resolve('src/index.ts'), { relative: 'src/index.ts', fsPath: path.join(fx.root, 'src/index.ts') })
  t.match(await ws.resolve('./src/../src/app.ts'), { relative: 'src/app.ts' })
  t.match(await ws.resolve(path.join(fx.root, 'README.md')), { relative: 'README.md' })
  t.match(await ws.resolve(`file://${fx.root}/README.md`), { relative: 'README.md' })
  t.match(await ws.resolve('-dash.txt'), { relative: '-dash.txt' })
  t.match(await ws.resolve('with space.txt'), { relative: 'with space.txt' })
  t.match(await ws.resolve('unicodé-日本.txt'), { relative: 'unicodé-日本.txt' })
  t.match(await ws.resolve('link-inside'), { relative: 'src/index.ts', requested: 'link-inside' })
  t.match(await ws.resolve('link-inside-dir/app.ts'), { relative: 'src/app.ts' })
})

t.test('resolve: lexical escapes are PATH_OUTSIDE_ROOT before any disk access, never echoing absolute paths', async (t) => {
  const { fx, ws } = await setup(t)

  for (const p of ['..', '../outside/secret.txt', 'src/../../outside', '../root-evil/secret.txt', '/etc/passwd',
    path.join(fx.outside, 'secret.txt'), path.join(fx.base, 'root-evil', 'secret.txt'), `${fx.root}-evil/secret.txt`,
    `file://${fx.outside}/secret.txt`, '../outside/does-not-exist']) {
    const err = await ws.resolve(p).then(() => undefined, (e: Error) => e)
    t.match(err, { toolCode: 'PATH_OUTSIDE_ROOT' }, p)
    t.notMatch(err?.message ?? '', fx.base, `${p}: no absolute path in the message`)
  }
})

t.test('resolve: links out of the root are SYMLINK_ESCAPES_ROOT, even for missing children', async (t) => {
  const { fx, ws } = await setup(t)

  for (const p of ['link-to-secret', 'link-abs-secret', 'link-to-outside-dir', 'link-to-outside-dir/secret.txt',
    'link-to-outside-dir/nope.txt', 'link-to-outside-dir/dir/inner.txt', 'link-to-evil', 'link-to-evil/secret.txt']) {
    t.equal(await codeOf(ws, p), 'SYMLINK_ESCAPES_ROOT', p)
    t.equal(await codeOf(ws, p, false), 'SYMLINK_ESCAPES_ROOT', `${p} (mustExist false)`)
    const err = await ws.resolve(p).catch((e: Error) => e) as Error
    t.notMatch(err.message, fx.base)
    t.notMatch(err.message, fx.canary)
  }
})

t.test('resolve: bad input and missing paths', async (t) => {
  const { ws } = await setup(t)

  t.equal(await codeOf(ws, 'src/\u0000index.ts'), 'INVALID_PATH')
  t.equal(await codeOf(ws, 'src/index.ts\n'), 'INVALID_PATH')
  t.equal(await codeOf(ws, 'x'.repeat(5000)), 'INVALID_PATH')
  t.equal(await codeOf(ws, 'loop-a'), 'INVALID_PATH')
  t.equal(await codeOf(ws, 'link-dangling'), 'PATH_NOT_FOUND')
  t.equal(await codeOf(ws, 'README.md/child'), 'NOT_A_DIRECTORY')
  t.equal(await codeOf(ws, 'nope/deeper/file.ts'), 'PATH_NOT_FOUND')
  t.match(await ws.resolve('nope/deeper/file.ts', { mustExist: false }), { relative: 'nope/deeper/file.ts' })

  const err = await ws.resolve('src/utils/helper.ts', { field: 'files[0].path' }).catch((e: Error) => e) as Error
  t.match(err, { toolCode: 'PATH_NOT_FOUND', message: /files\[0\]\.path/ })
  t.match(err.message, /did you mean: src\/util\/helpers\.ts/)
})

t.test('openFile: regular files only, FIFOs fail at once', async (t) => {
  const { fx, ws } = await setup(t)

  const fh = await ws.openFile(await ws.resolve('src/app.ts'))
  t.match((await fh.readFile()).toString(), /return 42/)
  await fh.close()

  t.equal(await toolCodeOf(ws.openFile(await ws.resolve('src'))), 'IS_A_DIRECTORY')
  if (fx.hasFifo) t.equal(await toolCodeOf(ws.openFile(await ws.resolve('fifo'))), 'NOT_A_REGULAR_FILE')
})

t.test('names that are not UTF-8 are listed with \\x escapes and can be read back', async (t) => {
  const { ws } = await setup(t)

  const entries = await ws.readDirectory({ relative: '.', fsPath: ws.root })
  const odd = entries.find(e => e.name.startsWith('bad-'))
  t.equal(odd?.name, 'bad-\\xff\\xfe.txt')

  const resolved = await ws.resolve('bad-\\xff\\xfe.txt')
  t.equal(resolved.relative, 'bad-\\xff\\xfe.txt')
  const fh = await ws.openFile(resolved)
  t.equal((await fh.readFile()).toString(), 'bytes name\n')
  await fh.close()
  // A file's facts come with its open descriptor: the caller closes it (a dropped one is closed only by the GC).
  const inspected = await ws.inspect('bad-\\xff\\xfe.txt')
  await inspected.handle?.close()
  t.match(inspected, { relative: 'bad-\\xff\\xfe.txt', kind: 'file' })
})

t.test('isIgnored honours root and nested .gitignore, .ignore and .git', async (t) => {
  const { ws } = await setup(t)

  t.equal(await ws.isIgnored('ignored.log', false), true)
  t.equal(await ws.isIgnored('build', true), true)
  t.equal(await ws.isIgnored('build/out.js', false), true)
  t.equal(await ws.isIgnored('nested/a.tmp', false), true)
  t.equal(await ws.isIgnored('nested/keep.txt', false), false)
  t.equal(await ws.isIgnored('scratch/notes.txt', false), true)
  t.equal(await ws.isIgnored('.git', true), true)
  t.equal(await ws.isIgnored('.git/HEAD', false), true)
  t.equal(await ws.isIgnored('src/app.ts', false), false)
  t.equal(await ws.isIgnored('.', true), false)
})

t.test('inspect does not follow the last link and never describes outside targets', async (t) => {
  const { ws } = await setup(t)

  t.match(await ws.inspect('link-to-secret'), { kind: 'symlink', link: { state: 'outside' } })
  t.match(await ws.inspect('link-inside'), { kind: 'symlink', link: { state: 'inside', relative: 'src/index.ts', kind: 'file' } })
  t.match(await ws.inspect('loop-a'), { kind: 'symlink', link: { state: 'loop' } })
  t.match(await ws.inspect('link-dangling'), { kind: 'symlink', link: { state: 'broken' } })
  t.match(await ws.inspect('.'), { kind: 'dir', relative: '.' })
  t.equal(await toolCodeOf(ws.inspect('link-to-outside-dir/secret.txt')), 'SYMLINK_ESCAPES_ROOT')
  t.equal(await toolCodeOf(ws.inspect('../outside/secret.txt')), 'PATH_OUTSIDE_ROOT')
  t.equal(await toolCodeOf(ws.inspect('src/nope.ts')), 'PATH_NOT_FOUND')
})

t.test('hard links: a regular file with more than one link is refused unless allowed (one name may be outside)', async (t) => {
  const { fx } = await setup(t)
  const fs = await import('node:fs')
  fs.linkSync(path.join(fx.outside, 'secret.txt'), path.join(fx.root, 'hard-secret.txt'))
  const strict = await createWorkspace({ root: fx.root, log })
  const lenient = await createWorkspace({ root: fx.root, log, allowHardLinks: true })

  const resolved = await strict.resolve('hard-secret.txt')
  const err = await strict.openFile(resolved).catch((e: Error) => e) as Error & { toolCode?: string }
  t.equal(err.toolCode, 'HARD_LINK_REFUSED')
  t.notMatch(err.message, fx.canary)
  t.notMatch(err.message, fx.base)
  t.equal(await strict.readText('hard-secret.txt'), undefined)
  t.equal(await toolCodeOf(strict.pin(resolved)), 'HARD_LINK_REFUSED')
  const handle = await lenient.openFile(await lenient.resolve('hard-secret.txt'))
  t.match((await handle.readFile()).toString(), fx.canary, 'allowed by the operator, it is an ordinary file')
  await handle.close()
})
