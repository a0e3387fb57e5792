import { EventEmitter } from 'node:events'
import fs, { type FSWatcher } from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { createFolderWatch } from '../../../src/services/code-index/folder-watch.js'
import { waitUntil } from '../../helpers/wait.js'

// The code index's watcher: one fs.watch per folder a scan walked, changes gathered until quiet.

/** fs.watch stand-ins: each watched folder's listener, until its watcher is closed; a folder named `gone` is not there. */
type Listener = (event: string, name: string | Buffer | null) => void
function fakeWatch (): { listeners: Map<string, Listener>, watch: (folder: string, listener: Listener) => FSWatcher } {
  const listeners = new Map<string, Listener>()
  const watch = (folder: string, listener: Listener): FSWatcher => {
    if (path.basename(folder) === 'gone') throw Object.assign(new Error(`ENOENT: ${folder}`), { code: 'ENOENT' })
    listeners.set(folder, listener)
    return Object.assign(new EventEmitter(), { close: () => { listeners.delete(folder) } }) as unknown as FSWatcher
  }
  return { listeners, watch }
}

t.test('changes in a watched folder are reported once quiet, a burst as one; the set decides what is watched; close ends it', async (t) => {
  const { listeners, watch } = fakeWatch()
  let changes = 0
  const reported: Array<Map<string, Set<string>>> = []
  const folders = createFolderWatch({ onChange: (changed) => { changes++; reported.push(changed) }, onFail: () => t.fail('no failure expected'), quietMs: 20, watch })
  t.teardown(() => folders.close())
  folders.update(['/r', '/r/a'])
  t.same([...listeners.keys()], ['/r', '/r/a'], 'only the folders of the set')

  for (let i = 0; i < 5; i++) listeners.get('/r/a')?.('change', `f${i % 2}.ts`)
  listeners.get('/r')?.('rename', null)
  listeners.get('/r')?.('rename', Buffer.from([0xff]))
  await waitUntil(() => changes > 0, 'the burst to go quiet')
  t.equal(changes, 1, 'a burst of changes is one report: each change put the one timer off, none is left')
  t.same(reported[0], new Map([['/r/a', new Set(['f0.ts', 'f1.ts'])], ['/r', new Set([''])]]), 'the names changed in each folder; \'\' where the system said none, or none in UTF-8')

  folders.update(['/r', '/r/b', '/r/gone'])
  t.same([...listeners.keys()], ['/r', '/r/b'], 'a folder dropped from the set is no longer watched; one that vanished is passed by')
  t.equal(folders.size(), 2)
  listeners.get('/r/b')?.('change', 'b.ts')
  await waitUntil(() => changes > 1, 'the change in the newly watched folder')
  t.equal(changes, 2)
  t.same(reported[1], new Map([['/r/b', new Set(['b.ts'])]]), 'each report holds only what changed since the one before')

  folders.close()
  t.same([...listeners.keys()], [], 'close ends every watcher')
})

t.test('on a real folder, a file written in it and one changed in place are each reported', async (t) => {
  const root = fs.realpathSync(t.testdir({ a: { 'g.ts': 'x\n' } }))
  let changes = 0
  const folders = createFolderWatch({ onChange: () => { changes++ }, onFail: () => t.fail('no failure expected'), quietMs: 20 })
  t.teardown(() => folders.close())
  folders.update([path.join(root, 'a')])

  fs.writeFileSync(path.join(root, 'a', 'f.ts'), 'x\n')
  await waitUntil(() => changes > 0, 'the new file to be reported')
  const afterNew = changes
  fs.appendFileSync(path.join(root, 'a', 'g.ts'), 'y\n')
  await waitUntil(() => changes > afterNew, 'the change in place to be reported')

  t.ok(changes >= 2)
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
