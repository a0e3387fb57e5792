// search_regex over the Linux 6.1 source tree, as a ratio to raw ripgrep on the same query in the same run.
// Run alone: `npm run build && node bench/search.mjs [--runs 5] [--bin old/dist/bin/cli.js]`; bench/run.js calls
// runSearchBench(). With a bin, that build's engine runs beside this one's (a before/after figure in one run).
import { spawn, spawnSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { fileURLToPath, pathToFileURL } from 'node:url'

const here = path.dirname(fileURLToPath(import.meta.url))
const repo = path.resolve(here, '..')
/** Where bench/corpus.sh unpacks the tree (gitignored). */
export const CORPUS = path.join(here, '.corpus', 'linux-source-6.1')

/**
 * The queries: the three of issue 43's first-page goal (also timed cold, the tree's pages evicted before each
 * contender), then a rare literal, a very common word, and a regex with no literal to prefilter on.
 */
export const SEARCH_QUERIES = [
  { name: 'common literal', pattern: 'kmalloc', literal: true, cold: true },
  { name: 'escaped call', pattern: 'EXPORT_SYMBOL_GPL\\(', literal: false, cold: true },
  { name: 'struct regex', pattern: 'struct [a-z_]+_ops \\{', literal: false, cold: true },
  { name: 'rare literal', pattern: 'sock_no_sendpage_locked', literal: true },
  { name: 'common word', pattern: 'return', literal: false },
  { name: 'regex, no literal', pattern: '\\w+_\\d+ =', literal: false }
]

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length % 2 === 1 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2
}

/** Walk flags our search implies (ignore rules confined to the root, 10 MB file cap), for the raw baseline. */
function rawArgs (query, output) {
  const args = ['--no-config', '--no-require-git', '--no-ignore-global', '--no-ignore-parent', '--max-filesize', '10M', ...output]
  if (query.literal) args.push('--fixed-strings')
  return [...args, '--regexp', query.pattern, '--', '.']
}

/** CPU ms of this process's reaped children (cutime + cstime, /proc/self/stat, 100 Hz ticks): ripgrep's, ours or raw. */
function childrenCpuMs () {
  const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ')
  return (Number(fields[13]) + Number(fields[14])) * 10
}

/** Runs raw ripgrep with its stdout drained by this process (as a terminal or pipe would): wall ms, its CPU ms, bytes. */
function timeRaw (rgPath, args) {
  return new Promise((resolve, reject) => {
    const cpu = childrenCpuMs()
    const started = performance.now()
    const child = spawn(rgPath, args, { cwd: CORPUS, stdio: ['ignore', 'pipe', 'ignore'] })
    let bytes = 0
    child.stdout.on('data', (chunk) => { bytes += chunk.length })
    child.on('error', reject)
    child.on('close', () => resolve({ ms: performance.now() - started, cpu: childrenCpuMs() - cpu, bytes }))
  })
}

/** The search engine of a build: this checkout's dist/, or the one whose dist/bin/cli.js `bin` names. */
async function loadEngine (bin) {
  const dist = bin === undefined ? path.join(repo, 'dist', 'src') : path.join(path.dirname(path.dirname(path.resolve(bin))), 'src')
  if (!existsSync(path.join(dist, 'services', 'search', 'index.js'))) {
    throw new Error(`${dist} has no search engine: run \`npm run build\` first`)
  }
  const load = (p) => import(pathToFileURL(path.join(dist, p)).href)
  const [{ createWorkspace }, { createSearch }, { createTokenizer }, { searchRegex }, pino] = await Promise.all([
    load('services/workspace/index.js'), load('services/search/index.js'), load('services/tokenizer/index.js'), load('tools/search-regex.js'), import('pino')
  ])
  return { createWorkspace, createSearch, createTokenizer, searchRegex, pino: pino.default }
}

/** Installs and unpacks the corpus when missing (bench/corpus.sh: apt-get install linux-source-6.1). */
export function ensureCorpus () {
  const r = spawnSync('sh', [path.join(here, 'corpus.sh')], { stdio: ['ignore', 'inherit', 'inherit'] })
  if (r.status !== 0 || !existsSync(path.join(CORPUS, 'Makefile'))) throw new Error('corpus preparation failed (bench/corpus.sh)')
}

/**
 * Evicts the tree's file pages from the page cache (posix_fadvise DONTNEED on every file; only this tree's clean
 * pages, never the whole machine's caches). Node has no fadvise; python3 has. Returns false when it cannot.
 */
function evictCorpus () {
  const script = 'import os,sys\nfor d,_,fs in os.walk(sys.argv[1]):\n  for f in fs:\n    p=os.path.join(d,f)\n    try:\n      fd=os.open(p,os.O_RDONLY|os.O_NOFOLLOW)\n    except OSError:\n      continue\n    try: os.posix_fadvise(fd,0,0,os.POSIX_FADV_DONTNEED)\n    finally: os.close(fd)\n'
  return spawnSync('python3', ['-c', script, CORPUS], { stdio: 'ignore' }).status === 0
}

/** One engine's search_regex first page: wall ms, CPU ms (this process and its ripgrep children), the worst event-loop delay. */
async function timeOurs (engine, query, ctx) {
  engine.search.close() // drop the cache: every run is a first page from a fresh scan
  const delay = monitorEventLoopDelay({ resolution: 10 })
  delay.enable()
  const own = process.cpuUsage()
  const children = childrenCpuMs()
  const started = performance.now()
  const result = await engine.searchRegex.run({ pattern: query.pattern, literal: query.literal, search: engine.search, tokenizer: engine.tokenizer }, ctx)
  const ms = performance.now() - started
  const used = process.cpuUsage(own)
  delay.disable()
  if (result.isError) throw new Error(`${query.name}: ${result.content[0].text}`)
  return { ms, cpu: (used.user + used.system) / 1000 + childrenCpuMs() - children, delay: delay.max / 1e6, result }
}

async function openEngine (bin, log) {
  const { createWorkspace, createSearch, createTokenizer, searchRegex } = await loadEngine(bin)
  const workspace = await createWorkspace({ root: CORPUS, log })
  const tokenizer = createTokenizer()
  return { search: await createSearch({ workspace, log }), tokenizer, searchRegex }
}

/**
 * For each query: medians of `runs` interleaved runs of raw `rg -n`, `rg -c`, `rg --json` and our search_regex
 * first page (tool `run`, cache cleared each time), plus the worst event-loop delay seen during ours; with `bin`,
 * that build's first page too. A query marked cold is also timed with the tree evicted from the page cache before
 * each of `rg -c`, ours (and the other build), alternating, `coldRuns` times.
 */
export async function runSearchBench ({ runs = 5, coldRuns = 3, bin, queries = SEARCH_QUERIES, progress = (line) => process.stderr.write(line + '\n') } = {}) {
  ensureCorpus()
  const { pino } = await loadEngine()
  const log = pino({ level: 'silent' })
  const ours = await openEngine(undefined, log)
  const before = bin === undefined ? undefined : await openEngine(bin, log)
  const { rgPath } = await import('@vscode/ripgrep')
  const ctx = { signal: new AbortController().signal, log, progress: async () => {}, notify: async () => {}, client: { capabilities: {}, request: async () => ({}) } }
  const rows = []
  const canEvict = queries.some(q => q.cold) && evictCorpus()
  try {
    for (const query of queries) {
      const cold = { rgc: [], ours: [], before: [], delay: 0 }
      const coldTimes = canEvict && query.cold === true ? coldRuns : 0
      for (let i = 0; i < coldTimes; i++) {
        evictCorpus()
        cold.rgc.push((await timeRaw(rgPath, rawArgs(query, ['--count']))).ms)
        evictCorpus()
        const run = await timeOurs(ours, query, ctx)
        cold.ours.push(run.ms)
        cold.delay = Math.max(cold.delay, run.delay)
        if (before !== undefined) {
          evictCorpus()
          cold.before.push((await timeOurs(before, query, ctx)).ms)
        }
      }
      await timeRaw(rgPath, rawArgs(query, ['--line-number'])) // warm the page cache
      const raw = []
      const rawCount = []
      const rawJson = []
      const mine = []
      const theirs = []
      const cpu = { rgc: [], mine: [], theirs: [] }
      let worstDelay = 0
      let rawDelay = 0
      let total = 0
      let totalIsLowerBound = false
      for (let i = 0; i < runs; i++) {
        // The loop delay while this process only drains raw rg is the machine's noise floor.
        const floor = monitorEventLoopDelay({ resolution: 10 })
        floor.enable()
        raw.push((await timeRaw(rgPath, rawArgs(query, ['--line-number']))).ms)
        floor.disable()
        rawDelay = Math.max(rawDelay, floor.max / 1e6)
        const counted = await timeRaw(rgPath, rawArgs(query, ['--count']))
        rawCount.push(counted.ms)
        cpu.rgc.push(counted.cpu)
        rawJson.push((await timeRaw(rgPath, rawArgs(query, ['--json']))).ms)
        const run = await timeOurs(ours, query, ctx)
        mine.push(run.ms)
        cpu.mine.push(run.cpu)
        worstDelay = Math.max(worstDelay, run.delay)
        if (before !== undefined) {
          const other = await timeOurs(before, query, ctx)
          theirs.push(other.ms)
          cpu.theirs.push(other.cpu)
        }
        const result = run.result
        total = result.structuredContent.pagination.total
        totalIsLowerBound = result.structuredContent.pagination.total_is_lower_bound
      }
      const row = {
        query: query.name,
        pattern: query.pattern,
        matching_lines: `${total}${totalIsLowerBound ? '+' : ''}`,
        raw_rg_n_ms: Math.round(median(raw)),
        raw_rg_c_ms: Math.round(median(rawCount)),
        raw_rg_json_ms: Math.round(median(rawJson)),
        ours_first_page_ms: Math.round(median(mine)),
        ratio_vs_rg_n: +(median(mine) / median(raw)).toFixed(2),
        ratio_vs_rg_c: +(median(mine) / median(rawCount)).toFixed(2),
        ratio_vs_rg_json: +(median(mine) / median(rawJson)).toFixed(2),
        max_event_loop_delay_ms: +worstDelay.toFixed(1),
        noise_floor_delay_ms: +rawDelay.toFixed(1),
        raw_rg_c_cpu_ms: Math.round(median(cpu.rgc)),
        ours_cpu_ms: Math.round(median(cpu.mine)),
        cpu_ratio_vs_rg_c: +(median(cpu.mine) / median(cpu.rgc)).toFixed(2),
        ...(theirs.length === 0 ? {} : { before_first_page_ms: Math.round(median(theirs)), before_ratio_vs_rg_c: +(median(theirs) / median(rawCount)).toFixed(2), before_cpu_ratio_vs_rg_c: +(median(cpu.theirs) / median(cpu.rgc)).toFixed(2) }),
        ...(cold.ours.length === 0
          ? {}
          : {
              cold_rg_c_ms: Math.round(median(cold.rgc)),
              cold_ours_ms: Math.round(median(cold.ours)),
              cold_ratio_vs_rg_c: +(median(cold.ours) / median(cold.rgc)).toFixed(2),
              cold_max_event_loop_delay_ms: +cold.delay.toFixed(1),
              ...(cold.before.length === 0 ? {} : { cold_before_ms: Math.round(median(cold.before)), cold_before_ratio_vs_rg_c: +(median(cold.before) / median(cold.rgc)).toFixed(2) })
            })
      }
      rows.push(row)
      progress(`search bench: ${row.query} done (ours ${row.ours_first_page_ms} ms, rg -n ${row.raw_rg_n_ms} ms)`)
    }
  } finally {
    for (const engine of [ours, before]) {
      if (engine === undefined) continue
      engine.search.close()
      await engine.tokenizer.close()
    }
  }
  return rows
}

/** Renders the rows as Markdown tables: warm, then (when any query ran cold) cold. */
export function searchBenchTable (rows) {
  const dash = (v) => v ?? '—'
  const head = ['query', 'pattern', 'matching lines', 'rg -n ms', 'rg -c ms', 'rg --json ms', 'search_regex ms', 'ratio vs rg -n', 'ratio vs rg -c', 'ratio vs rg --json', 'max loop delay ms', 'loop delay floor ms', 'CPU ms rg -c / ours', 'CPU ratio vs rg -c', 'other build ms', 'other build vs rg -c', 'other build CPU vs rg -c']
  const lines = [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`]
  for (const r of rows) {
    lines.push(`| ${r.query} | \`${r.pattern}\` | ${r.matching_lines} | ${r.raw_rg_n_ms} | ${r.raw_rg_c_ms} | ${r.raw_rg_json_ms} | ${r.ours_first_page_ms} | ${r.ratio_vs_rg_n} | ${r.ratio_vs_rg_c} | ${r.ratio_vs_rg_json} | ${r.max_event_loop_delay_ms} | ${r.noise_floor_delay_ms} | ${r.raw_rg_c_cpu_ms} / ${r.ours_cpu_ms} | ${r.cpu_ratio_vs_rg_c} | ${dash(r.before_first_page_ms)} | ${dash(r.before_ratio_vs_rg_c)} | ${dash(r.before_cpu_ratio_vs_rg_c)} |`)
  }
  const cold = rows.filter(r => r.cold_ours_ms !== undefined)
  if (cold.length > 0) {
    const coldHead = ['query (cold: the tree evicted from the page cache before each)', 'rg -c ms', 'search_regex ms', 'ratio vs rg -c', 'max loop delay ms', 'other build ms', 'other build vs rg -c']
    lines.push('', `| ${coldHead.join(' | ')} |`, `|${coldHead.map(() => '---').join('|')}|`)
    for (const r of cold) lines.push(`| ${r.query} (\`${r.pattern}\`) | ${r.cold_rg_c_ms} | ${r.cold_ours_ms} | ${r.cold_ratio_vs_rg_c} | ${r.cold_max_event_loop_delay_ms} | ${dash(r.cold_before_ms)} | ${dash(r.cold_before_ratio_vs_rg_c)} |`)
  }
  return lines.join('\n')
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const arg = (name) => { const at = process.argv.indexOf(name); return at === -1 ? undefined : process.argv[at + 1] }
  const rows = await runSearchBench({ runs: Number(arg('--runs') ?? 5), bin: arg('--bin') })
  process.stdout.write(searchBenchTable(rows) + '\n')
}
