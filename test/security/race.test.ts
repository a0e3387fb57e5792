import t from 'tap'
import { Worker } from 'node:worker_threads'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import pino from 'pino'
import { createWorkspace } from '../../src/services/workspace/workspace.js'

// Check-then-open races: someone with write access to the workspace swaps a folder for a link to the
// outside while calls run. Resolution, open and listing must never hand back a byte from outside:
// reads check the opened descriptor's real path, listings read the verified descriptor.

const ROUNDS = 600

t.test('a folder swapped for a link to the outside while reads and listings run never leaks the outside', { skip: process.platform === 'linux' ? false : 'descriptor check needs /proc' }, async (t) => {
  const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'wmcp-race-')))
  t.teardown(() => fs.rmSync(base, { recursive: true, force: true }))
  const root = path.join(base, 'root')
  const outside = path.join(base, 'outside')
  const canary = `CANARY-race-${process.pid}`
  fs.mkdirSync(path.join(root, 'dir'), { recursive: true })
  fs.mkdirSync(outside)
  // The same names inside and outside, so a swapped path always "works": only the content tells them apart.
  fs.writeFileSync(path.join(root, 'dir', 'notes.txt'), 'inside text\n')
  fs.writeFileSync(path.join(outside, 'notes.txt'), `${canary}\n`)
  fs.writeFileSync(path.join(outside, `${canary}.txt`), 'x\n')

  // The attacker: a thread of its own swapping root/dir for a link to the outside, as fast as it can, until stopped
  // (30 s at most). Its renames are system calls that run while this thread's reads and listings do.
  const swapper = new Worker(`
    const fs = require('node:fs')
    const { workerData: { dir, outside }, parentPort } = require('node:worker_threads')
    const aside = dir + '.aside'
    const stop = Date.now() + 30000
    parentPort.postMessage('swapping')
    while (Date.now() < stop) {
      try { fs.renameSync(dir, aside); fs.symlinkSync(outside, dir); fs.unlinkSync(dir); fs.renameSync(aside, dir) } catch {}
    }
  `, { eval: true, workerData: { dir: path.join(root, 'dir'), outside } })
  t.teardown(async () => { await swapper.terminate() })
  await new Promise(resolve => swapper.once('message', resolve))

  const ws = await createWorkspace({ root, log: pino({ level: 'silent' }) })
  let read = 0
  let listed = 0
  let refused = 0
  for (let i = 0; i < ROUNDS; i++) {
    try {
      const resolved = await ws.resolve('dir/notes.txt')
      const handle = await ws.openFile(resolved)
      try {
        const text = (await handle.readFile()).toString()
        if (text.includes(canary)) t.fail(`round ${i}: read the outside file`)
        read++
      } finally {
        await handle.close()
      }
    } catch (err) {
      if ((err as { toolCode?: string }).toolCode === undefined) throw err
      refused++
    }
    try {
      const dir = await ws.resolve('dir')
      const entries = await ws.readDirectory(dir)
      if (entries.some(e => e.name.includes(canary))) t.fail(`round ${i}: listed the outside folder`)
      listed++
    } catch (err) {
      if ((err as { toolCode?: string, code?: string }).toolCode === undefined && (err as { code?: string }).code === undefined) throw err
      refused++
    }
  }
  t.comment(`${read} reads and ${listed} listings inside, ${refused} refused as escaping or missing, 0 from the outside`)
  t.ok(read + listed > 0, 'some calls got through between swaps')
  t.ok(refused > 0, 'the race was real: some calls met the swapped link')
})
