import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { getFileInfo } from '../../src/tools/get-file-info.js'
import { hostileServices, textOf, toolContext } from '../helpers/workspace-fixture.js'

type Items = { items: Array<Record<string, unknown>> }
const itemsOf = (sc: unknown) => (sc as Items).items

t.test('describes files, folders, links and special files, one item per path', async (t) => {
  const fx = await hostileServices(t)
  const paths = ['src/app.ts', 'binary.bin', 'src', 'ignored.log', 'link-inside', 'link-to-secret', 'loop-a', 'link-dangling', 'big.txt', 'bad-\\xff\\xfe.txt', '.']
  if (fx.hasFifo) paths.push('fifo')

  const result = await getFileInfo.run({ workspace: fx.workspace, paths }, toolContext())
  const items = itemsOf(result.structuredContent)
  const text = textOf(result)

  t.notOk(result.isError)
  t.match(items[0], { path: 'src/app.ts', type: 'file', size: 39, lines: 3, binary: false, gitignored: false })
  t.match(items[1], { path: 'binary.bin', type: 'file', binary: true })
  t.notOk('lines' in items[1])
  t.match(items[2], { path: 'src', type: 'dir', gitignored: false })
  t.match(text, /\nsrc — directory, 3 entries, /)
  t.match(items[3], { path: 'ignored.log', gitignored: true, lines: 1 })
  t.match(items[4], { path: 'link-inside', type: 'symlink', link_target: 'src/index.ts' })
  t.match(items[5], { path: 'link-to-secret', type: 'symlink', link_target: 'outside workspace' })
  t.notOk('lines' in items[5] || 'binary' in items[5], 'nothing about the outside target')
  t.match(items[6], { link_target: 'loop' })
  t.match(items[7], { link_target: 'broken' })
  t.match(items[8], { path: 'big.txt', size: 20_000_000, binary: false })
  t.notOk('lines' in items[8], 'files over 10 MB are not counted')
  t.match(items[9], { path: 'bad-\\xff\\xfe.txt', type: 'file', lines: 1 })
  t.match(items[10], { path: '.', type: 'dir' })
  if (fx.hasFifo) t.match(items[11], { path: 'fifo', type: 'fifo' })
  t.match(text, /^src\/app\.ts — file, 39 B, 3 lines, text, TypeScript, modified \d{4}-/)
  t.match(text, /\nlink-to-secret — symlink -> outside workspace \(not followed\)/)
  t.notMatch(text, fx.canary)
  t.notMatch(text, fx.base)
})

t.test('each bad path fails alone; all failing is isError; absolute inputs are not echoed', async (t) => {
  const fx = await hostileServices(t, { big: false })

  const mixed = await getFileInfo.run({ workspace: fx.workspace, paths: ['README.md', '../outside/secret.txt', 'nope.md'] }, toolContext())
  t.notOk(mixed.isError)
  t.same(itemsOf(mixed.structuredContent).map(i => i.error ?? 'ok'), ['ok', 'PATH_OUTSIDE_ROOT', 'PATH_NOT_FOUND'])

  const bad = await getFileInfo.run({ workspace: fx.workspace, paths: [fx.outside + '/secret.txt', 'link-to-outside-dir/secret.txt', 'x\u0000'] }, toolContext())
  t.equal(bad.isError, true)
  t.same(itemsOf(bad.structuredContent).map(i => i.error), ['PATH_OUTSIDE_ROOT', 'SYMLINK_ESCAPES_ROOT', 'INVALID_PATH'])
  t.match(itemsOf(bad.structuredContent)[0], { path: 'paths[0] (absolute path)' })
  t.notMatch(textOf(bad), fx.base)
})

t.test('more than 100 paths is TOO_MANY_ITEMS', async (t) => {
  const fx = await hostileServices(t, { big: false })

  await t.rejects(Promise.resolve().then(() => getFileInfo.run({ workspace: fx.workspace, paths: Array.from({ length: 101 }, () => 'README.md') }, toolContext())), { message: /^ERROR TOO_MANY_ITEMS/ })
})

t.test('a hard-linked file is described without its content facts, and says why', async (t) => {
  const fx = await hostileServices(t, { big: false })
  fs.writeFileSync(path.join(fx.root, 'twice.txt'), 'one\ntwo\n')
  fs.linkSync(path.join(fx.root, 'twice.txt'), path.join(fx.root, 'twice-again.txt'))

  const result = await getFileInfo.run({ workspace: fx.workspace, paths: ['twice.txt'] }, toolContext())
  const [item] = itemsOf(result.structuredContent)

  t.notOk(result.isError, 'the name and size are still facts about the workspace')
  t.match(item, { path: 'twice.txt', type: 'file', size: 8 })
  t.notOk('lines' in item || 'binary' in item, 'nothing read from the content')
  t.match(textOf(result), /twice\.txt — file, 8 B, .*not readable: HARD_LINK_REFUSED/)
})
