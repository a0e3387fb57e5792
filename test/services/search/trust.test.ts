import fs from 'node:fs'
import path from 'node:path'
import { Worker } from 'node:worker_threads'
import t from 'tap'
import pino from 'pino'
import { createSearch, type SearchMode } from '../../../src/services/search/search.js'
import { createWorkspace } from '../../../src/services/workspace/workspace.js'
import { hostileServices, toolCodeOf } from '../../helpers/workspace-fixture.js'

const log = pino({ level: 'silent' })

/** Swaps `dir` with the symlink `lnk` (and back) in a tight loop on a thread of its own, for at most `ms`. */
function swapper (dir: string, lnk: string, ms: number): { stop(): Promise<number> } {
  const script = `const fs = require('node:fs'); const { workerData, parentPort } = require('node:worker_threads')
const { dir, lnk, ms } = workerData; const real = dir + '.real'
let n = 0; const until = Date.now() + ms
while (Date.now() < until && !fs.existsSync(dir + '.stop')) {
  try { fs.renameSync(dir, real); fs.renameSync(lnk, dir); fs.renameSync(dir, lnk); fs.renameSync(real, dir); n++ } catch {}
}
try { fs.renameSync(real, dir) } catch {}
parentPort.postMessage(n)`
  const worker = new Worker(script, { eval: true, workerData: { dir, lnk, ms } })
  const done = new Promise<number>((resolve, reject) => {
    worker.once('message', resolve)
    worker.once('error', reject)
  })
  return {
    async stop () {
      fs.writeFileSync(`${dir}.stop`, '')
      return await done
    }
  }
}

interface RaceResult { answers: number, errors: Map<string, number>, leaked: number, swaps: number }

async function race (t: { teardown(fn: () => void): void }, searchPath: string, swapped: string, sameNames: boolean): Promise<RaceResult> {
  const fx = await hostileServices(t, { big: false })
  const tree = path.join(fx.outside, 'tree')
  const inside = path.join(fx.root, swapped)
  for (const [base, word] of [[inside, 'inside'], [tree, fx.canary]] as const) {
    for (const f of ['a.txt', 'sub/b.txt', 'sub/deeper/c.txt']) {
      const name = sameNames || base === inside ? f : f.replace('.txt', '-out.txt')
      fs.mkdirSync(path.dirname(path.join(base, name)), { recursive: true })
      fs.writeFileSync(path.join(base, name), `needle ${word}\n`.repeat(3))
    }
  }
  fs.symlinkSync(tree, path.join(fx.root, `${swapped}.lnk`))
  const search = await createSearch({ workspace: fx.workspace, log, cacheTtlMs: 0 })
  t.teardown(() => search.close())
  const swap = swapper(inside, path.join(fx.root, `${swapped}.lnk`), 15_000)
  const result: RaceResult = { answers: 0, errors: new Map(), leaked: 0, swaps: 0 }
  const modes: SearchMode[] = ['content', 'files', 'count']
  // Bounded by count and time: within 8 s each race meets the swapped link dozens of times (the comment
  // below reports how often); 20 s, with the swapper holding a core throughout, cost 40 s of CPU per run.
  const until = Date.now() + 8_000
  try {
    for (let i = 0; i < 200 && Date.now() < until; i++) {
      let answer = ''
      const code = await toolCodeOf(async () => {
        try {
          answer = JSON.stringify(await search.search({ pattern: 'needle', path: searchPath, mode: modes[i % 3] }, { offset: 0, pageSize: 100 }))
        } catch (err) {
          if (process.env.DEBUG_RACE !== undefined && (err as { toolCode?: string }).toolCode === undefined) console.error((err as Error).stack)
          throw err
        }
      })
      if (code === 'ok') result.answers++
      else result.errors.set(code, (result.errors.get(code) ?? 0) + 1)
      if (answer.includes(fx.canary)) {
        result.leaked++
        if (process.env.DEBUG_RACE !== undefined) console.error(answer.slice(0, 3000))
      }
    }
  } finally {
    result.swaps = await swap.stop()
  }
  return result
}

t.test('a searched folder swapped for a link to the outside while searches run: the outside never appears', async (t) => {
  const r = await race(t, 'work', 'work', true)
  t.comment(`searched folder swapped ${r.swaps} times: ${r.answers} answers, errors ${JSON.stringify([...r.errors])}`)
  t.equal(r.leaked, 0, 'no answer holds the outside canary')
  t.ok(r.answers > 0, 'some searches ran while the folder was in place')
  t.ok(r.swaps > 0, 'the folder was swapped')
  for (const code of r.errors.keys()) {
    // A link that is a folder again by the time it is read is INVALID_PATH ("changed while it was being resolved").
    t.ok(['SYMLINK_ESCAPES_ROOT', 'PATH_NOT_FOUND', 'INVALID_PATH'].includes(code), code)
  }
})

t.test('a sub-folder swapped while the whole root is searched: files found through the link are dropped by the re-check', async (t) => {
  const r = await race(t, '.', 'work', false)
  t.comment(`sub-folder swapped ${r.swaps} times: ${r.answers} answers, errors ${JSON.stringify([...r.errors])}`)
  t.equal(r.leaked, 0, 'no answer holds the outside canary')
  t.equal(r.errors.size, 0, 'the root itself is never refused')
})

t.test('shown files are re-checked: a file replaced by a link to the outside after the search is dropped, counted', async (t) => {
  const fx = await hostileServices(t, { big: false })
  const search = await createSearch({ workspace: fx.workspace, log })
  t.teardown(() => search.close())
  fs.mkdirSync(path.join(fx.root, 'w'))
  for (const f of ['a.txt', 'b.txt', 'c.txt']) fs.writeFileSync(path.join(fx.root, 'w', f), 'needle\n')

  const first = await search.search({ pattern: 'needle', path: 'w', mode: 'files' }, { offset: 0, pageSize: 100 })
  t.strictSame(first.files.map(f => f.path), ['w/a.txt', 'w/b.txt', 'w/c.txt'])
  fs.rmSync(path.join(fx.root, 'w', 'b.txt'))
  fs.symlinkSync(path.join(fx.outside, 'secret.txt'), path.join(fx.root, 'w', 'b.txt'))
  fs.rmSync(path.join(fx.root, 'w', 'c.txt'))

  const cached = await search.search({ pattern: 'needle', path: 'w', mode: 'files' }, { offset: 0, pageSize: 100 })
  t.equal(cached.cached, true)
  t.strictSame(cached.files.map(f => f.path), ['w/a.txt'])
  t.equal(cached.total, 1)
  t.match(cached.notices.join('\n'), /2 files dropped from the results: no longer inside the workspace/)
})

t.test('hard-linked files are dropped (counted) unless allowed; a named one is refused', async (t) => {
  const fx = await hostileServices(t, { big: false })
  fs.writeFileSync(path.join(fx.root, 'linked.txt'), 'needle here\n')
  fs.linkSync(path.join(fx.root, 'linked.txt'), path.join(fx.outside, 'hard-copy.txt'))
  fs.writeFileSync(path.join(fx.root, 'plain.txt'), 'needle here\n')
  const strict = await createSearch({ workspace: fx.workspace, log })
  // The policy is the workspace's (--allow-hard-links): the search re-checks through it.
  const lenient = await createSearch({ workspace: await createWorkspace({ root: fx.root, log, allowHardLinks: true }), log })
  t.teardown(() => { strict.close(); lenient.close() })

  for (const mode of ['content', 'files', 'count'] as const) {
    const page = await strict.search({ pattern: 'needle', mode }, { offset: 0, pageSize: 100 })
    const shown = mode === 'content' ? page.content.map(i => i.path) : page.files.map(f => f.path)
    t.strictSame(shown, ['plain.txt'], mode)
    t.match(page.notices.join('\n'), /1 hard-linked file dropped/, mode)
    const open = await lenient.search({ pattern: 'needle', mode }, { offset: 0, pageSize: 100 })
    t.strictSame((mode === 'content' ? open.content.map(i => i.path) : open.files.map(f => f.path)).sort(), ['linked.txt', 'plain.txt'], `${mode}, allowed`)
  }
  t.equal(await toolCodeOf(strict.search({ pattern: 'needle', path: 'linked.txt' }, { offset: 0, pageSize: 10 })), 'HARD_LINK_REFUSED')
})

t.test('files ripgrep skips silently (binary data, over the size cap) are counted in a notice, in every mode', async (t) => {
  const fx = await hostileServices(t, { big: false })
  fs.mkdirSync(path.join(fx.root, 'skip'))
  fs.writeFileSync(path.join(fx.root, 'skip', 'one.bin'), Buffer.from('needle\0binary\n'))
  fs.writeFileSync(path.join(fx.root, 'skip', 'two.bin'), Buffer.from('\0\0needle\n'))
  fs.writeFileSync(path.join(fx.root, 'skip', 'text.txt'), 'needle\n')
  const huge = fs.openSync(path.join(fx.root, 'skip', 'huge.txt'), 'w')
  fs.ftruncateSync(huge, 11 * 1024 * 1024)
  fs.writeSync(huge, 'needle\n', 11 * 1024 * 1024)
  fs.closeSync(huge)
  const search = await createSearch({ workspace: fx.workspace, log })
  t.teardown(() => search.close())

  for (const mode of ['content', 'files', 'count'] as const) {
    const page = await search.search({ pattern: 'needle', path: 'skip', mode }, { offset: 0, pageSize: 100 })
    t.equal(page.total, mode === 'content' ? 1 : 1, mode)
    t.match(page.notices.join('\n'), /2 files with binary data skipped/, mode)
    t.match(page.notices.join('\n'), /1 file over the size cap skipped/, mode)
  }
  const named = await search.search({ pattern: 'needle', path: 'skip/huge.txt' }, { offset: 0, pageSize: 10 })
  t.equal(named.total, 1, 'a named file up to 100 MB is searched')
  t.strictSame(named.content.map(i => i.path), ['skip/huge.txt'])
  t.notMatch(named.notices.join('\n'), /size cap/)
})
