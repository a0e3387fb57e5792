import { EventEmitter } from 'node:events'
import fs, { type FSWatcher } from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { createFolderWatch } from '../../../src/services/code-index/folder-watch.js'

// The code index's watcher: one fs.watch per folder a scan walked, changes gathered until quiet.

/** Resolves after `ms`; the watcher's events arrive in between. */
const settle = async (ms: number): Promise<void> => await new Promise(resolve => setTimeout(resolve, ms))

/** Waits (bounded) until `count()` reaches `n`. */
async function until (count: () => number, n: number): Promise<void> {
  for (let i = 0; i < 200 && count() < n; i++) await settle(25)
}

t.test('a change in a watched folder is reported once it is quiet; other folders are not watched', async (t) => {
  const root = fs.realpathSync(t.testdir({ a: {}, b: {} }))
  let changes = 0
  const watch = createFolderWatch({ onChange: () => { changes++ }, onFail: () => t.fail('no failure expected'), quietMs: 50 })
  t.teardown(() => watch.close())
  watch.update([root, path.join(root, 'a')])
  t.equal(watch.size(), 2)

  for (let i = 0; i < 5; i++) fs.writeFileSync(path.join(root, 'a', `f${i}.ts`), 'x\n')
  await until(() => changes, 1)
  await settle(150)
  t.equal(changes, 1, 'a burst of writes is one change')

  fs.writeFileSync(path.join(root, 'b', 'g.ts'), 'x\n')
  await settle(200)
  t.equal(changes, 1, 'a folder not in the set is not watched')

  watch.update([root, path.join(root, 'b'), path.join(root, 'gone')])
  t.equal(watch.size(), 2, 'a folder dropped from the set is no longer watched; one that vanished is passed by')
  fs.writeFileSync(path.join(root, 'a', 'h.ts'), 'x\n')
  await settle(200)
  t.equal(changes, 1)
  fs.appendFileSync(path.join(root, 'b', 'g.ts'), 'y\n')
  await until(() => changes, 2)
  t.equal(changes, 2, 'a file changed in place in a newly watched folder')

  watch.close()
  fs.writeFileSync(path.join(root, 'b', 'late.ts'), 'x\n')
  await settle(200)
  t.equal(changes, 2, 'nothing after close')
})

t.test('watching is given up, once, past the folder limit or the system\'s watch limit', async (t) => {
  const root = fs.realpathSync(t.testdir({ a: {}, b: {}, c: {} }))
  const failures: string[] = []
  const many = createFolderWatch({ onChange: () => {}, onFail: why => failures.push(why), maxFolders: 2 })
  many.update(['a', 'b', 'c'].map(f => path.join(root, f)))
  many.update([path.join(root, 'a')])
  t.same(failures, ['3 folders are more than the 2 watched at most'])
  t.equal(many.size(), 0, 'and nothing stays watched')

  let opened = 0
  const limited = createFolderWatch({
    onChange: () => {},
    onFail: why => failures.push(why),
    watch: (folder, listener) => {
      if (++opened > 2) throw Object.assign(new Error('no space'), { code: 'ENOSPC' })
      return fs.watch(folder, { persistent: false }, listener)
    }
  })
  limited.update(['a', 'b', 'c'].map(f => path.join(root, f)))
  t.equal(failures[1], 'the system refused more watches (ENOSPC) after 2 folders')
  t.equal(limited.size(), 0, 'the two opened are closed again')
})

t.test('a watcher that reports an error is dropped (the next scan decides about its folder)', async (t) => {
  const fake = Object.assign(new EventEmitter(), { close: () => { closed++ } }) as unknown as FSWatcher
  let closed = 0
  const watch = createFolderWatch({ onChange: () => {}, onFail: () => {}, watch: () => fake })
  watch.update(['/somewhere'])
  t.equal(watch.size(), 1)
  fake.emit('error', new Error('EPERM'))
  t.equal(watch.size(), 0)
  t.equal(closed, 1)
})
