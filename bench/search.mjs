// search_regex over the Linux 6.1 source tree, as a ratio to raw ripgrep on the same query in the same run.
// Run alone: `npm run build && node bench/search.mjs [--runs 5]`; bench/run.js calls runSearchBench().
import { spawn, spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import path from 'node:path'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { fileURLToPath, pathToFileURL } from 'node:url'

const here = path.dirname(fileURLToPath(import.meta.url))
const repo = path.resolve(here, '..')
/** Where bench/corpus.sh unpacks the tree (gitignored). */
export const CORPUS = path.join(here, '.corpus', 'linux-source-6.1')

/** The queries: a rare literal, a very common word, and a regex with no literal to prefilter on. */
export const SEARCH_QUERIES = [
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

/** Runs raw ripgrep with its stdout drained by this process (as a terminal or pipe would), returns wall ms. */
function timeRaw (rgPath, args) {
  return new Promise((resolve, reject) => {
    const started = performance.now()
    const child = spawn(rgPath, args, { cwd: CORPUS, stdio: ['ignore', 'pipe', 'ignore'] })
    let bytes = 0
    child.stdout.on('data', (chunk) => { bytes += chunk.length })
    child.on('error', reject)
    child.on('close', () => resolve({ ms: performance.now() - started, bytes }))
  })
}

async function loadEngine () {
  const dist = path.join(repo, 'dist', 'src')
  if (!existsSync(path.join(dist, 'services', 'search', 'index.js'))) {
    throw new Error('dist/ is missing: run `npm run build` first')
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
 * For each query: medians of `runs` interleaved runs of raw `rg -n`, raw `rg --json` and our search_regex
 * first page (tool `run`, cache cleared each time), plus the worst event-loop delay seen during ours.
 */
export async function runSearchBench ({ runs = 5, queries = SEARCH_QUERIES, progress = (line) => process.stderr.write(line + '\n') } = {}) {
  ensureCorpus()
  const { createWorkspace, createSearch, createTokenizer, searchRegex, pino } = await loadEngine()
  const log = pino({ level: 'silent' })
  const workspace = await createWorkspace({ root: CORPUS, log })
  const tokenizer = createTokenizer()
  const search = await createSearch({ workspace, log })
  const { rgPath } = await import('@vscode/ripgrep')
  const ctx = { signal: new AbortController().signal, log, progress: async () => {}, notify: async () => {}, client: { capabilities: {}, request: async () => ({}) } }
  const rows = []
  try {
    for (const query of queries) {
      await timeRaw(rgPath, rawArgs(query, ['--line-number'])) // warm the page cache
      const raw = []
      const rawCount = []
      const rawJson = []
      const ours = []
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
        rawCount.push((await timeRaw(rgPath, rawArgs(query, ['--count']))).ms)
        rawJson.push((await timeRaw(rgPath, rawArgs(query, ['--json']))).ms)
        search.close() // drop the cache: every run is a first page from a fresh scan
        const delay = monitorEventLoopDelay({ resolution: 10 })
        delay.enable()
        const started = performance.now()
        const result = await searchRegex.run({ pattern: query.pattern, literal: query.literal, search, tokenizer }, ctx)
        ours.push(performance.now() - started)
        delay.disable()
        worstDelay = Math.max(worstDelay, delay.max / 1e6)
        if (result.isError) throw new Error(`${query.name}: ${result.content[0].text}`)
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
        ours_first_page_ms: Math.round(median(ours)),
        ratio_vs_rg_n: +(median(ours) / median(raw)).toFixed(2),
        ratio_vs_rg_c: +(median(ours) / median(rawCount)).toFixed(2),
        ratio_vs_rg_json: +(median(ours) / median(rawJson)).toFixed(2),
        max_event_loop_delay_ms: +worstDelay.toFixed(1),
        noise_floor_delay_ms: +rawDelay.toFixed(1)
      }
      rows.push(row)
      progress(`search bench: ${row.query} done (ours ${row.ours_first_page_ms} ms, rg -n ${row.raw_rg_n_ms} ms)`)
    }
  } finally {
    search.close()
    await tokenizer.close()
  }
  return rows
}

/** Renders the rows as a Markdown table. */
export function searchBenchTable (rows) {
  const head = ['query', 'pattern', 'matching lines', 'rg -n ms', 'rg -c ms', 'rg --json ms', 'search_regex ms', 'ratio vs rg -n', 'ratio vs rg -c', 'ratio vs rg --json', 'max loop delay ms', 'loop delay floor ms']
  const lines = [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`]
  for (const r of rows) {
    lines.push(`| ${r.query} | \`${r.pattern}\` | ${r.matching_lines} | ${r.raw_rg_n_ms} | ${r.raw_rg_c_ms} | ${r.raw_rg_json_ms} | ${r.ours_first_page_ms} | ${r.ratio_vs_rg_n} | ${r.ratio_vs_rg_c} | ${r.ratio_vs_rg_json} | ${r.max_event_loop_delay_ms} | ${r.noise_floor_delay_ms} |`)
  }
  return lines.join('\n')
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const at = process.argv.indexOf('--runs')
  const runs = at === -1 ? 5 : Number(process.argv[at + 1])
  const rows = await runSearchBench({ runs })
  process.stdout.write(searchBenchTable(rows) + '\n')
}
