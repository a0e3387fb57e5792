import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import pino from 'pino'
import { rgPath } from '@vscode/ripgrep'
import { createSearch, type CreateSearchOptions } from '../../../src/services/search/search.js'
import { hostileServices } from '../../helpers/workspace-fixture.js'
import { beginEvent, countRecord, endEvent, matchEvent, scriptRg } from '../../helpers/stand-in-rg.js'

// The passes behind a content search: the counting pass (a long line too) and its file cap, and the fetch of a
// page's lines — over real ripgrep, with a wrapper that makes one kind of pass fail.

const log = pino({ level: 'silent' })

async function fixture (t: { teardown(fn: () => void): void }, extra: Partial<CreateSearchOptions> = {}) {
  const fx = await hostileServices(t, { big: false })
  for (let i = 0; i < 12; i++) {
    fs.mkdirSync(path.join(fx.root, 'many', `d${i % 4}`), { recursive: true })
    fs.writeFileSync(path.join(fx.root, 'many', `d${i % 4}`, `f${i}.txt`), Array.from({ length: 5 }, (_, n) => `needle ${i}-${n}\n`).join(''))
  }
  const search = await createSearch({ workspace: fx.workspace, log, ...extra })
  t.teardown(() => search.close())
  return { ...fx, search }
}

/** Real ripgrep in `dir`, except that the runs whose arguments match `when` (a shell case pattern) are killed, as by the OOM killer. */
const killedRg = (dir: string, when: string): string => scriptRg(dir, 'killed-rg.sh', `case "$*" in ${when}) kill -KILL $$;; esac\nexec '${rgPath}' "$@"`)

t.test('a line too long to hold is counted like the rest, and its page shows it', async (t) => {
  const fx = await fixture(t)
  fs.writeFileSync(path.join(fx.root, 'zz-long.txt'), `needle a\nneedle b\n${'needle '.repeat(200_000)}\n`)

  const page = await fx.search.search({ pattern: 'needle', include: ['zz-long.txt', 'many/**'] }, { offset: 60, pageSize: 5 })

  t.equal(page.total, 63, '12 files × 5, and 3 lines of the long file')
  t.equal(page.totalIsLowerBound, false)
  t.same(page.content.map(i => `${i.path}:${i.hit.line}`), ['zz-long.txt:1', 'zz-long.txt:2', 'zz-long.txt:3'])
})

t.test('the counting pass stops at maxFiles: the total is a lower bound, and says so', async (t) => {
  const fx = await fixture(t, { maxFiles: 3 })

  const page = await fx.search.search({ pattern: 'needle' }, { offset: 0, pageSize: 5 })

  t.equal(page.totalIsLowerBound, true)
  t.match(page.notices.join('\n'), /stopped at 3 files; total is a lower bound — narrow path or include/)
})

t.test('a --count pass that fails with nothing counted is SEARCH_FAILED, never "no matches"', async (t) => {
  const fx = await fixture(t, { rgPath: killedRg(t.testdir(), '*--count*') })

  await t.rejects(fx.search.search({ pattern: 'needle' }, { offset: 0, pageSize: 5 }), { toolCode: 'SEARCH_FAILED', message: /killed by SIGKILL.*"no matches" cannot be told/ })
})

t.test('a page whose lines cannot be fetched is SEARCH_FAILED, not an empty page', async (t) => {
  // The search runs over '.'; a page's fetch names its files ('./many/…'), and that run is killed.
  const fx = await fixture(t, { rgPath: killedRg(t.testdir(), '*--json*"-- ./"*') })

  await t.rejects(fx.search.search({ pattern: 'needle' }, { offset: 40, pageSize: 5 }), { toolCode: 'SEARCH_FAILED', message: /killed by SIGKILL/ })
})

t.test('a record too long to hold that is not a line (here a padded event of another kind) is skipped; the matches after it stand', async (t) => {
  const fx = await hostileServices(t, { big: false })
  fs.writeFileSync(path.join(fx.root, 'a.txt'), 'hit\n')
  const rg = scriptRg(fx.base, 'padded-rg.sh', `case "$*" in *--count*) ${countRecord('./a.txt', 1)}; exit 0;; esac
printf '%s\\n' '${beginEvent('./a.txt')}'
printf '{"type":"other","data":{"path":{"text":"./a.txt"},"pad":"'
head -c 1200000 /dev/zero | tr '\\000' x
printf '"}}\\n'
printf '%s\\n' '${matchEvent('./a.txt')}' '${endEvent('./a.txt')}' '{"type":"summary","data":{}}'`)
  const search = await createSearch({ workspace: fx.workspace, log, rgPath: rg })
  t.teardown(() => search.close())

  const page = await search.search({ pattern: 'hit' }, { offset: 0, pageSize: 10 })

  t.same(page.content.map(i => `${i.path}:${i.hit.line}:${i.hit.text}`), ['a.txt:1:hit'])
})

/** Real ripgrep, except that a page's read (a --json run naming files: `-- ./…`) leaves a mark and never answers. */
const silentPageRg = (dir: string): { rg: string, marker: string } => {
  const marker = path.join(dir, 'page-read')
  return { rg: scriptRg(dir, 'silent-page-rg.sh', `case "$*" in *--json*"-- ./"*) : > '${marker}'; exec sleep 30;; esac\nexec '${rgPath}' "$@"`), marker }
}

t.test('a later page reads its window within a deadline of its own, not what is left of the first call\'s', async (t) => {
  const timeoutMs = 2000
  const fx = await fixture(t, { timeoutMs })

  const first = await fx.search.search({ pattern: 'needle' }, { offset: 0, pageSize: 5 })
  // The first call's deadline (set when its first ripgrep started, before it answered) is now past.
  const past = Date.now() + timeoutMs
  while (Date.now() <= past) await new Promise(resolve => setTimeout(resolve, past - Date.now() + 1))
  const later = await fx.search.search({ pattern: 'needle' }, { offset: 40, pageSize: 5 })

  t.equal(first.totalIsLowerBound, false)
  t.equal(later.cached, true, 'the counted set is paged')
  // In path order, results 40–44 are the ninth file's: many/d2/f6.txt ('f10' sorts before 'f2').
  t.same(later.content.map(i => `${i.path}:${i.hit.text}`), [0, 1, 2, 3, 4].map(n => `many/d2/f6.txt:needle 6-${n}`))
  t.notMatch(later.notices.join('\n'), /cut|stopped|partial/)
})

t.test('a page whose read is stopped before its first result fails, saying why: the shutdown, or the deadline', async (t) => {
  const dir = t.testdir()
  const { rg, marker } = silentPageRg(dir)
  const fx = await fixture(t, { rgPath: rg, timeoutMs: 3000 })

  const pending = fx.search.search({ pattern: 'needle' }, { offset: 40, pageSize: 5 }).then(() => 'answered', (err: Error) => err)
  while (!fs.existsSync(marker)) await new Promise(resolve => setTimeout(resolve, 5))
  fx.search.windDown()
  const shutdown = await pending
  const timeout = await fx.search.search({ pattern: 'needle' }, { offset: 40, pageSize: 5 }).then(() => 'answered', (err: Error) => err)

  t.match(shutdown, { toolCode: 'SHUTTING_DOWN', message: /lines of this page could not be read: the server is shutting down/ })
  t.match(timeout, { toolCode: 'TIMEOUT', message: /took longer than 3 s \(a page deep in a file with many matches is read from the file's start\)/ })
})

t.test('a page whose lines would pass what a page may hold is cut after its first results, and says where to go on', async (t) => {
  const fx = await fixture(t, { maxPageBytes: 400 })

  const page = await fx.search.search({ pattern: 'needle' }, { offset: 10, pageSize: 20 })

  t.equal(page.total, 60)
  t.ok(page.content.length > 0 && page.content.length < 20, `${page.content.length} results`)
  t.same(page.notices.filter(n => n.startsWith('this page')), [`this page was cut at ${page.content.length} of 20 results: its lines would have taken more than the ${400 / 1024 / 1024} MB a page may hold — the footer's next call continues after them`])
})

t.test('a counted file whose name is not UTF-8 is read through its pin: its page shows its lines under its escaped name', async (t) => {
  const fx = await hostileServices(t, { big: false })
  fs.mkdirSync(path.join(fx.root, 'odd'))
  for (const n of [1, 2]) fs.writeFileSync(Buffer.concat([Buffer.from(path.join(fx.root, 'odd') + '/'), Buffer.from([0xff]), Buffer.from(`${n}.txt`)]), `needle ${n}\n`.repeat(3))
  const search = await createSearch({ workspace: fx.workspace, log })
  t.teardown(() => search.close())

  const page = await search.search({ pattern: 'needle', path: 'odd' }, { offset: 2, pageSize: 2 })

  t.equal(page.total, 6, 'counted')
  t.same(page.content.map(i => `${i.path}:${i.hit.line}:${i.hit.text}`), ['odd/\\xff1.txt:3:needle 1', 'odd/\\xff2.txt:1:needle 2'])
})

t.test('counted files that can no longer be pinned (removed, or now a folder) keep empty windows: nothing is invented', async (t) => {
  const fx = await hostileServices(t, { big: false })
  fs.mkdirSync(path.join(fx.root, 'odd'))
  const names = [1, 2].map(n => Buffer.concat([Buffer.from(path.join(fx.root, 'odd') + '/'), Buffer.from([0xff]), Buffer.from(`${n}.txt`)]))
  for (const name of names) fs.writeFileSync(name, 'needle\n'.repeat(3))
  const search = await createSearch({ workspace: fx.workspace, log })
  t.teardown(() => search.close())

  const first = await search.search({ pattern: 'needle', path: 'odd' }, { offset: 0, pageSize: 1 })
  fs.rmSync(names[0])
  fs.rmSync(names[1])
  fs.mkdirSync(names[1])
  const later = await search.search({ pattern: 'needle', path: 'odd' }, { offset: 1, pageSize: 4 })

  t.equal(first.content.length, 1)
  t.equal(later.cached, true, 'the set counted earlier is paged')
  t.same(later.content, [])
})
