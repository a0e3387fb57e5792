import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import t from 'tap'

const CHILD = path.join(import.meta.dirname, '..', '..', 'helpers', 'search-rss-child.ts')
const MB = 1024 * 1024

/** Runs the child with this process's loader flags (TypeScript) and returns its figures, one set per concurrency. */
function measure (root: string, file: string, concurrencies: number[]): Array<{ concurrency: number, before: number, peak: number, total: number, line: number, shown: number, length: number, notices: string[] }> {
  const loader = process.execArgv.filter(a => a.startsWith('--import') && a.includes('ts-loader'))
  const out = execFileSync(process.execPath, [...loader, '--expose-gc', CHILD, root, file, concurrencies.join(',')], { maxBuffer: 16 * MB, timeout: 110_000 })
  return JSON.parse(out.toString())
}

t.test('search_regex on a named 100 MB one-line file: memory stays bounded (the line is streamed, never held)', async (t) => {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'wsmcp-rss-')))
  t.teardown(() => fs.rmSync(root, { recursive: true, force: true }))
  const fd = fs.openSync(path.join(root, 'one-line.txt'), 'w')
  const chunk = Buffer.alloc(MB, 'a')
  for (let i = 0; i < 100; i++) fs.writeSync(fd, chunk)
  fs.writeSync(fd, 'needle\n')
  fs.closeSync(fd)

  // One child, one search then four: the four start on what the first left mapped, and a line held whole would still
  // need ~400 MB more.
  for (const r of measure(root, 'one-line.txt', [1, 4])) {
    const concurrency = r.concurrency
    const growth = (r.peak - r.before) / MB
    t.comment(`${concurrency} at once: RSS +${growth.toFixed(0)} MB`)
    t.equal(r.total, 1, `one match (notices: ${r.notices.join('; ')})`)
    t.equal(r.line, 1, 'the line number survives (ripgrep writes it after the line)')
    t.equal(r.shown, 2000, 'the kept start of the line')
    t.equal(r.length, 100 * MB + 6, 'the full length is counted while streaming')
    // Generous: before, one search grew RSS by ~524 MB and four by ~1.07 GB.
    t.ok(growth < 120, `RSS growth ${growth.toFixed(0)} MB`)
  }
})
