import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import pino from 'pino'
import { createSearch, type CreateSearchOptions } from '../../../src/services/search/search.js'
import { searchRegex } from '../../../src/tools/search-regex.js'
import { hostileServices, textOf, toolContext } from '../../helpers/workspace-fixture.js'
import { manualTimers } from '../../helpers/manual-timers.js'

// A search that took more than half the time a search may take says so in its answer: the next one like it, over a
// larger tree or on a busier machine, would be cut. The search's clock is a manual one that moves `step` ms each time
// it is read (once when the first ripgrep gets its slot, once when the search is done): no sleeps, no wall clock.

const log = pino({ level: 'silent' })

async function fixture (t: { teardown(fn: () => void): void }, step: number, extra: Partial<CreateSearchOptions> = {}) {
  const fx = await hostileServices(t, { big: false })
  fs.mkdirSync(path.join(fx.root, 'tree'))
  for (let i = 0; i < 3; i++) fs.writeFileSync(path.join(fx.root, 'tree', `f${i}.txt`), 'needle\n'.repeat(4))
  const clock = manualTimers()
  const now = (): number => {
    const at = clock.timers.now()
    clock.advance(step)
    return at
  }
  const search = await createSearch({ workspace: fx.workspace, log, timeoutMs: 10_000, now, ...extra })
  t.teardown(() => {
    search.close()
    fx.tokenizer.close().catch(() => {})
  })
  return { ...fx, search }
}

const slowNotices = (notices: string[]): string[] => notices.filter(n => n.startsWith('this search took'))

t.test('a search past half its deadline says how long it took, and how to narrow the next one', async (t) => {
  const fx = await fixture(t, 6_000)

  const folder = await fx.search.search({ pattern: 'needle', path: 'tree' }, { offset: 0, pageSize: 5 })
  const file = await fx.search.search({ pattern: 'needle', path: 'tree/f0.txt' }, { offset: 0, pageSize: 5 })
  const again = await fx.search.search({ pattern: 'needle', path: 'tree' }, { offset: 5, pageSize: 5 })

  t.equal(folder.total, 12)
  t.same(slowNotices(folder.notices), ['this search took 6.0 s of the 10 s a search may take; one like it over more files or on a busier machine would stop with partial results — narrow path or include, or make the pattern more specific'])
  t.same(slowNotices(file.notices), ['this search took 6.0 s of the 10 s a search may take; one like it over more files or on a busier machine would stop with partial results — make the pattern more specific'], 'a named file can only be narrowed by its pattern')
  t.equal(again.cached, true)
  t.same(slowNotices(again.notices), [], 'a page of a cached set ran no search')
})

t.test('a search within half its deadline says nothing of its time', async (t) => {
  const fx = await fixture(t, 5_000)

  const page = await fx.search.search({ pattern: 'needle', path: 'tree', mode: 'count' }, { offset: 0, pageSize: 5 })

  t.equal(page.lineCount, 12)
  t.same(slowNotices(page.notices), [], 'exactly half is not past it')
})

t.test('a search already cut short does not also say it was slow (its notice says the total is a lower bound)', async (t) => {
  const fx = await fixture(t, 9_000, { maxFiles: 1 })

  const page = await fx.search.search({ pattern: 'needle', path: 'tree', mode: 'files' }, { offset: 0, pageSize: 5 })

  t.equal(page.totalIsLowerBound, true)
  t.same(slowNotices(page.notices), [])
})

t.test('search_regex\'s answer carries it, in its text and its structured notices', async (t) => {
  const fx = await fixture(t, 8_000)

  const result = await searchRegex.run({ pattern: 'needle', path: 'tree', search: fx.search, tokenizer: fx.tokenizer }, toolContext())

  t.notOk(result.isError)
  t.match(textOf(result), /\n> note: this search took 8\.0 s of the 10 s a search may take; .* — narrow path or include, or make the pattern more specific\n/)
  t.match(result.structuredContent, { notices: [/^this search took 8\.0 s of the 10 s/] })
})
