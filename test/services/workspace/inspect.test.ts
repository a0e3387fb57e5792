import t, { type Test } from 'tap'
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import * as fsp from 'node:fs/promises'
import path from 'node:path'
import pino from 'pino'
import { createWorkspace } from '../../../src/services/workspace/workspace.js'
import { getFileInfo } from '../../../src/tools/get-file-info.js'
import { createHostileWorkspace, textOf, toolCodeOf, toolContext } from '../../helpers/workspace-fixture.js'

// inspect (get_file_info's look at a path) describes from descriptors: a file or folder by the fstat of the
// descriptor it opened through a folder it holds, its lines read from that descriptor; what changes between the
// walk's look and the open is met here deterministically, by an open that changes the tree first.

const log = pino({ level: 'silent' })
const skip = process.platform === 'linux' ? false : 'reads /proc/self/fd'
const errno = (code: string): Error => Object.assign(new Error(code), { code })

type WorkspaceModule = typeof import('../../../src/services/workspace/workspace.js')

/** What an open of a name does first (`before`) or right after (`after`): once, for the next open of that name. */
interface Change { before?: () => void, after?: () => void }

/** createWorkspace over node:fs/promises whose `open` of a name in `changes` changes the tree, and whose /proc may be missing. */
async function racingWorkspace (t: Test, changes: Map<string, Change>, withoutProc = false): Promise<WorkspaceModule['createWorkspace']> {
  const fsOps = await t.mockImport('../../../src/services/workspace/fs-ops.js', {
    'node:fs/promises': {
      ...fsp,
      readlink: async (p: string, options?: { encoding?: BufferEncoding | 'buffer' }) => {
        if (withoutProc && String(p).startsWith('/proc/')) throw errno('ENOENT')
        return await fsp.readlink(p, options as { encoding: 'buffer' })
      },
      open: async (...args: Parameters<typeof fsp.open>) => {
        const name = path.basename(String(args[0]))
        const change = changes.get(name)
        changes.delete(name)
        change?.before?.()
        const handle = await fsp.open(...args)
        change?.after?.()
        return handle
      }
    }
  })
  const mod = await t.mockImport<WorkspaceModule>('../../../src/services/workspace/workspace.js', { '../../../src/services/workspace/fs-ops.js': fsOps })
  return mod.createWorkspace
}

t.test('each kind of path: a file hands on the descriptor its stats came from; a folder counts entries from its own; the root, and a walk ending in a folder', { skip }, async (t) => {
  const fx = createHostileWorkspace(t, { big: false })
  const ws = await createWorkspace({ root: fx.root, log })

  const file = await ws.inspect('src/app.ts')
  const fileIno = file.stats.ino
  const sameInode = (await file.handle?.stat())?.ino
  await file.handle?.close()
  const folder = await ws.inspect('src')
  const root = await ws.inspect('.')
  const viaUp = await ws.inspect('src/util/..')
  const link = await ws.inspect('link-to-secret')

  t.match(file, { kind: 'file', relative: 'src/app.ts', stats: { size: 39 } })
  t.equal(sameInode, fileIno, 'the handle is the descriptor the stats came from')
  t.match(folder, { kind: 'dir', entries: fs.readdirSync(path.join(fx.root, 'src')).length })
  t.notOk('handle' in folder)
  t.match(root, { kind: 'dir', relative: '.', entries: fs.readdirSync(fx.root).length, stats: { ino: fs.statSync(fx.root).ino } })
  t.match(viaUp, { kind: 'dir', entries: fs.readdirSync(path.join(fx.root, 'src')).length })
  t.match(link, { kind: 'symlink', link: { state: 'outside' } })
  t.notOk('handle' in link || 'entries' in link)
})

t.test('what changed between the walk\'s look and the open: a FIFO now is described as one, never read; a link now, or gone, is an error', { skip }, async (t) => {
  const fx = createHostileWorkspace(t, { big: false })
  const at = (name: string): string => path.join(fx.root, name)
  const changes = new Map<string, Change>([
    ['pipe.txt', { before: () => { fs.rmSync(at('pipe.txt')); execFileSync('mkfifo', [at('pipe.txt')]) } }],
    ['link.txt', { before: () => { fs.rmSync(at('link.txt')); fs.symlinkSync(path.join(fx.outside, 'secret.txt'), at('link.txt')) } }],
    ['gone.txt', { before: () => { fs.rmSync(at('gone.txt')) } }]
  ])
  const create = await racingWorkspace(t, changes)
  const ws = await create({ root: fx.root, log })
  for (const name of changes.keys()) fs.writeFileSync(at(name), 'text\n')

  const fifo = await ws.inspect('pipe.txt')
  const link = await toolCodeOf(ws.inspect('link.txt'))
  const gone = await toolCodeOf(ws.inspect('gone.txt'))

  t.match(fifo, { kind: 'fifo', relative: 'pipe.txt' })
  t.notOk('handle' in fifo, 'nothing to read')
  t.equal(link, 'INVALID_PATH', 'a link now: changed while it was being resolved, the outside never opened')
  t.equal(gone, 'PATH_NOT_FOUND')
})

t.test('a file or folder this server may not open: described by what the walk saw in the folder it holds, content refused', { skip }, async (t) => {
  const fx = createHostileWorkspace(t, { big: false })
  fs.writeFileSync(path.join(fx.root, 'private.txt'), 'secret\n')
  fs.mkdirSync(path.join(fx.root, 'private'))
  // Root reads anything: a refusing open stands in for a file this server's user may not read.
  const refuse = { before: () => { throw errno('EACCES') } }
  const changes = new Map<string, Change>()
  const create = await racingWorkspace(t, changes)
  const ws = await create({ root: fx.root, log })
  const again = (): void => { changes.set('private.txt', refuse); changes.set('private', refuse) }
  again()

  const file = await ws.inspect('private.txt')
  const folder = await ws.inspect('private')
  again()
  const info = await getFileInfo.run({ workspace: ws, paths: ['private.txt', 'private'] }, toolContext())

  t.match(file, { kind: 'file', stats: { size: 7 }, refused: 'PERMISSION_DENIED' })
  t.notOk('handle' in file)
  t.match(folder, { kind: 'dir', refused: 'PERMISSION_DENIED' })
  t.match(textOf(info), /^private\.txt — file, 7 B, Text, not readable: permission denied, modified /)
  t.match(textOf(info), /\nprivate — directory, not listable: permission denied, modified /)
})

t.test('without /proc: a path walk, then an open checked after opening — the same facts, the same refusals', async (t) => {
  const fx = createHostileWorkspace(t, { big: false })
  fs.writeFileSync(path.join(fx.root, 'private.txt'), 'secret\n')
  fs.writeFileSync(path.join(fx.root, 'doc.txt'), 'inside\n')
  const changes = new Map<string, Change>([
    ['private.txt', { before: () => { throw errno('EACCES') } }],
    // Where the descriptor check cannot read /proc, it walks again and compares inodes: a file replaced right after
    // its open is refused.
    ['doc.txt', { after: () => { fs.renameSync(path.join(fx.root, 'doc.txt'), path.join(fx.root, 'moved.txt')); fs.writeFileSync(path.join(fx.root, 'doc.txt'), 'other\n') } }]
  ])
  const create = await racingWorkspace(t, changes, true)
  const ws = await create({ root: fx.root, log })

  const file = await ws.inspect('src/app.ts')
  await file.handle?.close()
  const folder = await ws.inspect('src')
  const refused = await ws.inspect('private.txt')
  const replaced = await toolCodeOf(ws.inspect('doc.txt'))

  t.match(file, { kind: 'file', stats: { size: 39 } })
  t.ok(file.handle !== undefined)
  t.match(folder, { kind: 'dir', entries: fs.readdirSync(path.join(fx.root, 'src')).length })
  t.match(refused, { kind: 'file', refused: 'PERMISSION_DENIED' })
  t.equal(replaced, 'SYMLINK_ESCAPES_ROOT', 'replaced after its open: refused, as every read is')
})
