import t, { type Test } from 'tap'
import { Worker } from 'node:worker_threads'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import pino from 'pino'
import { createWorkspace } from '../../src/services/workspace/workspace.js'
import { getFileInfo } from '../../src/tools/get-file-info.js'
import { toolContext } from '../helpers/workspace-fixture.js'

// Check-then-open races: someone with write access to the workspace swaps a folder for a link to the
// outside while calls run. Resolution, open and listing must never hand back a byte from outside:
// reads check the opened descriptor's real path, listings read the verified descriptor, and get_file_info
// describes only what the descriptors the walk holds name.

const ROUNDS = 600
const skip = process.platform === 'linux' ? false : 'descriptor check needs /proc'

/**
 * The attacker: a thread of its own swapping `dir` for a link to `outside` (and back), as fast as it can, until
 * stopped (60 s at most). Its renames are system calls that run while this thread's calls do. Resolves once it swaps.
 */
async function startSwapper (t: Test, dir: string, outside: string): Promise<{ stop(): Promise<number> }> {
  const swapper = new Worker(`
    const fs = require('node:fs')
    const { workerData: { dir, outside }, parentPort } = require('node:worker_threads')
    const aside = dir + '.aside'
    const until = Date.now() + 60000
    let swaps = 0
    let stop = false
    parentPort.on('message', () => { stop = true })
    parentPort.postMessage('swapping')
    const loop = () => {
      // In slices, so the stop message is heard between them.
      for (let i = 0; i < 200 && Date.now() < until; i++) {
        try { fs.renameSync(dir, aside); fs.symlinkSync(outside, dir); fs.unlinkSync(dir); fs.renameSync(aside, dir); swaps++ } catch {}
      }
      if (stop || Date.now() >= until) parentPort.postMessage(swaps)
      else setImmediate(loop)
    }
    loop()
  `, { eval: true, workerData: { dir, outside } })
  t.teardown(async () => { await swapper.terminate() })
  await new Promise(resolve => swapper.once('message', resolve))
  return {
    async stop () {
      const counted = new Promise<number>(resolve => swapper.once('message', resolve))
      swapper.postMessage('stop')
      return await counted
    }
  }
}

t.test('a folder swapped for a link to the outside while reads and listings run never leaks the outside', { skip }, async (t) => {
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

  await startSwapper(t, path.join(root, 'dir'), outside)

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

/**
 * Calls get_file_info per run; each stops at this many calls, or at the time bound. 1,200 calls meet ~45,000 swaps
 * and still describe the inside file 20–75 times a run (2,500 took twice the CPU and found nothing more).
 */
const INFO_CALLS = 1200
const INFO_MS = 60_000

t.test('get_file_info under the swap race: never a fact about the outside, and the same answers whether the outside file exists or not', { skip }, async (t) => {
  const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'wmcp-race-info-')))
  t.teardown(() => fs.rmSync(base, { recursive: true, force: true }))
  const root = path.join(base, 'root')
  const outside = path.join(base, 'outside')
  const away = path.join(base, 'away')
  // The same names inside and outside; sizes and mtimes that tell them apart. The inside file's parent is the
  // swapped folder, the deep one's grandparent is.
  const inside = { 'notes.txt': 'inside text\n', 'sub/deep.txt': 'deep inside\nsecond line\n' }
  const outsideFiles = { 'notes.txt': 'o'.repeat(7777), 'sub/deep.txt': 'p'.repeat(8888) }
  const insideTime = new Date('2001-01-01T00:00:00Z')
  const outsideTime = new Date('2011-11-11T11:11:11Z')
  for (const [from, files, time] of [[path.join(root, 'dir'), inside, insideTime], [outside, outsideFiles, outsideTime]] as const) {
    for (const [name, text] of Object.entries(files)) {
      fs.mkdirSync(path.dirname(path.join(from, name)), { recursive: true })
      fs.writeFileSync(path.join(from, name), text)
      fs.utimesSync(path.join(from, name), time, time)
    }
  }
  fs.mkdirSync(away)
  const ws = await createWorkspace({ root, log: pino({ level: 'silent' }) })
  const expected = {
    'dir/notes.txt': { path: 'dir/notes.txt', type: 'file', size: 12, lines: 1, binary: false, gitignored: false },
    'dir/sub/deep.txt': { path: 'dir/sub/deep.txt', type: 'file', size: 24, lines: 2, binary: false, gitignored: false }
  }
  const ALLOWED_ERRORS = ['SYMLINK_ESCAPES_ROOT', 'PATH_NOT_FOUND', 'INVALID_PATH']

  /** One run of calls: each answer item as a class (`inside`, or its error code and message without its hint). */
  async function run (label: string): Promise<{ calls: number, classes: Map<string, number>, outsideFacts: number, swaps: number }> {
    const swapper = await startSwapper(t, path.join(root, 'dir'), outside)
    const classes = new Map<string, number>()
    let outsideFacts = 0
    let calls = 0
    const until = Date.now() + INFO_MS
    for (; calls < INFO_CALLS && Date.now() < until; calls++) {
      const result = await getFileInfo.run({ workspace: ws, paths: Object.keys(expected) }, toolContext())
      const text = result.content.map(c => (c as { text: string }).text).join('\n')
      const items = (result.structuredContent as { items: Array<Record<string, unknown>> }).items
      items.forEach((item, i) => {
        const want = expected[Object.keys(expected)[i] as keyof typeof expected]
        let key: string
        if (item.error === undefined) {
          const inside = Object.entries(want).every(([k, v]) => item[k] === v)
          key = inside ? `inside ${String(item.path)}` : `OTHER ${JSON.stringify(item)}`
          if (!inside) t.fail(`${label}: described something else`, { item })
        } else {
          const line = text.split('\n')[i]
          key = `${String(item.error)} ${line.replace(/ Hint: .*$/, '')}`
          if (!ALLOWED_ERRORS.includes(String(item.error))) t.fail(`${label}: unexpected error`, { line })
        }
        classes.set(key, (classes.get(key) ?? 0) + 1)
      })
      if (/7777|8888|7\.6 KB|8\.7 KB|2011-11-11/.test(text) || text.includes('ooo')) {
        outsideFacts++
        if (outsideFacts <= 3) t.comment(`${label}: outside fact in: ${text}`)
      }
    }
    const swaps = await swapper.stop()
    return { calls, classes, outsideFacts, swaps }
  }

  const present = await run('outside present')
  for (const name of Object.keys(outsideFiles)) fs.renameSync(path.join(outside, name), path.join(away, name.replace('/', '-')))
  const absent = await run('outside absent')

  for (const [label, r] of [['outside present', present], ['outside absent', absent]] as const) {
    t.comment(`${label}: ${r.calls} calls, ${r.swaps} swaps, answers ${JSON.stringify([...r.classes])}`)
    t.equal(r.outsideFacts, 0, `${label}: no answer holds the outside files' size or mtime`)
    t.ok(r.calls >= Math.min(INFO_CALLS, 200), `${label}: ${r.calls} calls ran`)
    t.ok(r.swaps > 0, `${label}: the folder was swapped`)
    t.ok(r.classes.has('inside dir/notes.txt'), `${label}: some calls described the inside file`)
    t.ok([...r.classes.keys()].some(k => !k.startsWith('inside')), `${label}: the race was real: some calls met the swap`)
  }
  // Present or absent, an answer is one of the same few, none decided by the outside: the inside file's facts, or
  // an error that names only the path asked for (the hint, a did-you-mean over the inside, aside).
  const messages = (r: typeof present): string[] => [...r.classes.keys()].filter(k => !k.startsWith('inside')).map(k => k.replace(/^\S+ /, ''))
  for (const message of [...messages(present), ...messages(absent)]) t.notMatch(message, /outside\/|7777|8888|2011/, message)
})
