// Child process of test/services/search/memory.test.ts: RSS growth of search_regex on a one-line file, measured alone.
// argv: <root> <file relative to root> <concurrent searches, comma-separated>; prints [{"before":…, "peak":…}, …] in bytes.
import pino from 'pino'
import { createSearch } from '../../src/services/search/search.js'
import { createWorkspace } from '../../src/services/workspace/workspace.js'

const [root, file, concurrencies] = process.argv.slice(2)
const log = pino({ level: 'silent' })
const workspace = await createWorkspace({ root, log })
// The figure is memory, not time: a generous deadline keeps a loaded machine from cutting the scan short.
const search = await createSearch({ workspace, log, cacheTtlMs: 0, timeoutMs: 100_000 })

/** RSS before and at the peak of `concurrency` searches at once, with the first page's figures. */
async function measure (concurrency: number) {
  global.gc?.()
  const before = process.memoryUsage.rss()
  let peak = before
  const sampler = setInterval(() => { peak = Math.max(peak, process.memoryUsage.rss()) }, 5)
  const pages = await Promise.all(Array.from({ length: concurrency }, () => search.search({ pattern: 'needle', path: file }, { offset: 0, pageSize: 10 })))
  clearInterval(sampler)
  peak = Math.max(peak, process.memoryUsage.rss())
  const hit = pages[0].content[0]?.hit
  return { concurrency, before, peak, total: pages[0].total, line: hit?.line, shown: hit?.text.length, length: hit?.length, notices: pages[0].notices }
}

// One after the other: each measured from its own start, the garbage of the one before collected.
const results = []
for (const concurrency of concurrencies.split(',').map(Number)) results.push(await measure(concurrency))
process.stdout.write(JSON.stringify(results))
search.close()
