// Memory and time of search_regex as the match count grows (issue 40, item 4), against a built stdio bin.
//
// For 10 k … 2 M matching lines in one named file (50-byte lines: 2 M fit the 100 MB a named file may have), and
// 2 M in a folder of twenty 100 k-line files: the growth of the server's peak RSS (VmHWM from /proc) over the first
// page and then the last page, each sample in a fresh server after a warm-up search, and the time of each page
// beside `rg -c` on the same path, alternating, in the same run. The data is generated in a temp dir and removed.
// Linux only (reads /proc). `npm run bench -- --only search-memory [--bin OTHER/cli.js]`.
import { spawn } from 'node:child_process'
import { closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync, writeSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { rgPath } from '@vscode/ripgrep'
import { stdioServer } from './stdio-client.js'

const WIDTH = 50
const GOAL_MB = 32
const PAGE = 10

/** Line `i` of a generated file: its number and NEEDLE, padded to WIDTH bytes with its newline. */
const matchLine = (i) => `line ${String(i).padStart(7, '0')} has a NEEDLE `.padEnd(WIDTH - 1, '.') + '\n'

/** Writes `count` matching lines numbered from `from`, a megabyte at a time. */
function writeMatches (file, count, from = 0) {
  const fd = openSync(file, 'w')
  let piece = []
  for (let i = from; i < from + count; i++) {
    piece.push(matchLine(i))
    if (piece.length * WIDTH >= 1 << 20) {
      writeSync(fd, piece.join(''))
      piece = []
    }
  }
  writeSync(fd, piece.join(''))
  closeSync(fd)
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
const fmtMs = (ms) => ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(0)} ms`
const fmtCount = (n) => n >= 1e6 ? `${n / 1e6} M` : `${n / 1e3} k`

/** Wall time of `rg -c NEEDLE target` in `root`, its output drained. */
function rgCount (root, target) {
  return new Promise((resolve, reject) => {
    const started = performance.now()
    const child = spawn(rgPath, ['-c', 'NEEDLE', '--', target], { cwd: root, stdio: ['ignore', 'pipe', 'ignore'] })
    child.stdout.resume()
    child.on('error', reject)
    child.on('close', () => resolve(performance.now() - started))
  })
}

/** Runs the section; returns table rows. */
export async function runSearchMemoryBench ({ bin, samples = 3, sizes = [10_000, 100_000, 1_000_000, 2_000_000] } = {}, log = () => {}) {
  const BIN = path.resolve(bin ?? fileURLToPath(new URL('../../dist/bin/cli.js', import.meta.url)))
  const root = mkdtempSync(path.join(tmpdir(), 'wmcp-bench-search-memory-'))
  const cases = sizes.map(n => ({ target: `m${n}.txt`, total: n, what: `${fmtCount(n)} matching lines in one named file` }))
  cases.push({ target: 'parts', total: 2_000_000, what: '2 M matching lines in a folder of twenty 100 k-line files' })
  try {
    log(`   writing ${sizes.reduce((n, s) => n + s, 0) * WIDTH / 1e6 + 100} MB of matching lines`)
    for (const n of sizes) writeMatches(path.join(root, `m${n}.txt`), n)
    mkdirSync(path.join(root, 'parts'))
    for (let i = 0; i < 20; i++) writeMatches(path.join(root, 'parts', `p${String(i).padStart(2, '0')}.txt`), 100_000, i * 100_000)
    writeFileSync(path.join(root, 'warm.txt'), matchLine(0))

    /** One sample: a fresh server, a warm-up search, then the first and the last page of `c`. */
    async function sample (c) {
      const { child, call, initialize } = stdioServer(BIN, root, ['--code-index', 'off', '--tokenizer-workers', '1'])
      try {
        await initialize()
        /** One call: its time and pagination, or the TIMEOUT it answered when `timeoutIsAnswer` (a deep page on a loaded machine). */
        const search = async (args, timeoutIsAnswer = false) => {
          const started = performance.now()
          const msg = await call('tools/call', { name: 'search_regex', arguments: { pattern: 'NEEDLE', ...args } })
          const ms = performance.now() - started
          const result = msg.result
          const text = result?.content?.[0]?.text ?? ''
          if (timeoutIsAnswer && result?.isError === true && text.startsWith('ERROR TIMEOUT')) return { ms, timeout: true }
          if (result === undefined || result.isError) throw new Error(`search_regex ${JSON.stringify(args)}: ${JSON.stringify(msg).slice(0, 500)}`)
          return { ms, pagination: result.structuredContent.pagination }
        }
        const peakMb = () => Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))[1]) / 1024
        await search({ path: 'warm.txt' })
        const base = peakMb()
        const first = await search({ path: c.target })
        const afterFirst = peakMb()
        const last = await search({ path: c.target, offset: c.total - PAGE }, true)
        const afterLast = peakMb()
        const p = first.pagination
        if (p.total !== c.total || p.returned !== PAGE || p.next_offset !== PAGE) throw new Error(`${c.target}: first page ${JSON.stringify(p)}`)
        if (!last.timeout && (last.pagination.returned !== PAGE || last.pagination.has_more)) throw new Error(`${c.target}: last page ${JSON.stringify(last.pagination)}`)
        return { firstMs: first.ms, lastMs: last.ms, lastTimeout: last.timeout === true, firstMb: afterFirst - base, lastMb: afterLast - base }
      } finally {
        child.kill('SIGTERM')
      }
    }

    const rows = []
    for (const c of cases) {
      log(`   ${c.target}: ${samples} sample(s), each in a fresh server, beside rg -c`)
      const ours = []
      const floor = []
      for (let i = 0; i < samples; i++) {
        // Alternating, so a change in the machine's load falls on both.
        if (i % 2 === 0) { ours.push(await sample(c)); floor.push(await rgCount(root, c.target)) } else { floor.push(await rgCount(root, c.target)); ours.push(await sample(c)) }
      }
      const rgMs = median(floor)
      const firstMb = Math.max(...ours.map(o => o.firstMb))
      const lastMb = Math.max(...ours.map(o => o.lastMb))
      const firstMs = median(ours.map(o => o.firstMs))
      const lastMs = median(ours.map(o => o.lastMs))
      const timeouts = ours.filter(o => o.lastTimeout).length
      rows.push({
        name: `search_regex first page, ${c.what}: peak RSS above idle, time beside \`rg -c\``,
        measured: `+${firstMb.toFixed(1)} MB, ${fmtMs(firstMs)}`,
        baseline: `\`rg -c\` ${fmtMs(rgMs)}`,
        ratio: firstMs / rgMs,
        goal: `≤ ${GOAL_MB} MB at any count (flat)`,
        pass: firstMb <= GOAL_MB,
        note: `largest growth of ${samples} fresh servers; time: medians`
      }, {
        name: `search_regex last page (offset ${(c.total - PAGE).toLocaleString('en')}), ${c.what}, after the first`,
        measured: `+${lastMb.toFixed(1)} MB, ${fmtMs(lastMs)}${timeouts === 0 ? '' : ` (${timeouts} of ${samples} answered TIMEOUT)`}`,
        baseline: `\`rg -c\` ${fmtMs(rgMs)}`,
        ratio: lastMs / rgMs,
        goal: `≤ ${GOAL_MB} MB (flat); time info`,
        pass: lastMb <= GOAL_MB,
        note: c.target === 'parts' ? 'a folder\'s file is read from its start: ripgrep\'s JSON for every match before the page' : 'sought: a plain run finds where the window starts, then ripgrep reads the file from there'
      })
    }
    return rows
  } finally {
    rmSync(root, { recursive: true, force: true })
  }
}
