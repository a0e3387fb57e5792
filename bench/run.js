#!/usr/bin/env node
// `npm run bench`: ours beside a bare floor and the SDK v1 peer, measured in one run, reported as
// ratios. Sections: http, peers, stdio, eras, cold, guide, limits, reads, search-memory, documents, search and walk (only with --search or BENCH_SEARCH=1), index, references, semantic, retrieval, retrieval-techniques, sizing, build-latency, build-floor, outlines, outline-cost and first-outline (only with --index).
// `--only` writes bench/results/<sections>.md, so a partial run never replaces latest.md (the full run's).
// retrieval: BENCH_EMBEDDINGS_URL / _MODEL / _KEY measure another provider than the shared model; BENCH_RETRIEVAL_TREES=workspace-mcp,python asks some trees (or sets) only;
// BENCH_RETRIEVAL_SPLIT=tuning asks only the questions not held out (results/retrieval-tuning.md); BENCH_RETRIEVAL_BIN=<other build's dist/bin/cli.js>
// with BENCH_RETRIEVAL_LABEL=<name> measures another build (results/retrieval-<name>.md). Only a full run of every tree rewrites the README block.
// code-latency (only when named): BENCH_BEFORE_BIN=<another build's dist/bin/cli.js> [BENCH_BEFORE_LABEL=<name>]: both builds index the whole Linux tree (or BENCH_LATENCY_TREE=<folder>), then search_code p50/p95 side by side.
// `--bin` points the reads and search-memory sections at another build's dist/bin/cli.js; the search section times it beside this one.
// Usage: node bench/run.js [--quick] [--only http,stdio] [--search] [--index] [--duration 5] [--rounds 2]
//        [--count 60000] [--runs 15] [--out bench/results/latest.md | --no-write] [--strict] [--bin path]
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { document, environment, table } from './lib/report.js'

const { values } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    only: { type: 'string' },
    search: { type: 'boolean', default: process.env.BENCH_SEARCH === '1' },
    index: { type: 'boolean', default: process.env.BENCH_INDEX === '1' },
    duration: { type: 'string' },
    warmup: { type: 'string' },
    rounds: { type: 'string' },
    connections: { type: 'string', default: '10' },
    count: { type: 'string' },
    window: { type: 'string', default: '64' },
    runs: { type: 'string' },
    out: { type: 'string' },
    'no-write': { type: 'boolean', default: false },
    strict: { type: 'boolean', default: false },
    bin: { type: 'string' }
  }
})

const quick = values.quick
const int = (value, fallback) => value === undefined ? fallback : Number.parseInt(value, 10)
const options = {
  quick,
  connections: int(values.connections, 10),
  duration: int(values.duration, quick ? 2 : 5),
  warmup: int(values.warmup, 1),
  rounds: int(values.rounds, quick ? 1 : 3),
  count: int(values.count, quick ? 5000 : 60000),
  window: int(values.window, 64),
  runs: int(values.runs, quick ? 10 : 15),
  latencyCount: quick ? 500 : 2000
}
options.warmupCount = Math.max(500, Math.round(options.count / 10))

const sections = values.only?.split(',').map(s => s.trim()) ?? ['http', 'peers', 'stdio', 'eras', 'cold', 'guide', 'limits', 'reads', 'search-memory', 'documents', ...(values.search ? ['search', 'walk'] : []), ...(values.index ? ['index', 'references', 'semantic', 'retrieval', 'retrieval-techniques', 'sizing', 'build-latency', 'build-floor', 'outlines', 'outline-cost', 'first-outline'] : [])]
// A run of the tuning questions alone (or of another build) never replaces the file of a full retrieval run.
const retrievalPart = process.env.BENCH_RETRIEVAL_SPLIT === 'tuning' ? '-tuning' : ''
const retrievalBuild = process.env.BENCH_RETRIEVAL_LABEL === undefined ? '' : `-${process.env.BENCH_RETRIEVAL_LABEL}`
const outFile = values.out ?? fileURLToPath(new URL(`results/${values.only === undefined ? 'latest' : sections.join('-')}${sections.includes('retrieval') ? retrievalPart + retrievalBuild : ''}.md`, import.meta.url))
const log = (line) => process.stderr.write(line + '\n')

const searchModule = new URL('search.mjs', import.meta.url)
const runners = {
  http: async () => (await import('./lib/http-bench.js')).runHttpBench(options, log),
  peers: async () => (await import('./lib/peers-bench.js')).runPeersBench(options, log),
  stdio: async () => (await import('./lib/stdio-bench.js')).runStdioBench({ ...options, warmup: options.warmupCount }, log),
  cold: async () => (await import('./lib/stdio-bench.js')).runColdBench(options, log),
  eras: async () => (await import('./lib/eras-bench.js')).runErasBench({ ...options, warmup: options.warmupCount }, log),
  guide: async () => (await import('./lib/guide-bench.js')).runGuideBench({ runs: options.runs }, log),
  limits: async () => (await import('./lib/limits-bench.js')).runLimitsBench({ duration: quick ? 4 : 10 }, log),
  reads: async () => (await import('./lib/reads-bench.js')).runReadsBench({ bin: values.bin, samples: quick ? 5 : 9 }, log),
  'search-memory': async () => (await import('./lib/search-memory-bench.js')).runSearchMemoryBench({ bin: values.bin, samples: quick ? 1 : 3 }, log),
  documents: async () => (await import('./lib/documents-bench.js')).runDocumentsBench({ bin: values.bin, samples: quick ? 5 : 9 }, log),
  index: async () => (await import('./lib/index-bench.js')).runIndexBench(log),
  references: async () => (await import('./lib/references-bench.js')).runReferencesBench(log),
  'first-outline': async () => (await import('./lib/first-outline-bench.js')).runFirstOutlineBench(log),
  semantic: async () => (await import('./lib/semantic-bench.js')).runSemanticBench(log),
  retrieval: async () => (await import('./lib/retrieval-bench.js')).runRetrievalBench(log, {
    only: process.env.BENCH_RETRIEVAL_TREES?.split(','),
    split: process.env.BENCH_RETRIEVAL_SPLIT,
    bin: process.env.BENCH_RETRIEVAL_BIN === undefined ? undefined : resolve(process.env.BENCH_RETRIEVAL_BIN),
    label: process.env.BENCH_RETRIEVAL_BIN === undefined ? undefined : process.env.BENCH_RETRIEVAL_LABEL ?? 'other'
  }),
  'retrieval-techniques': async () => (await import('./lib/retrieval-techniques.js')).runRetrievalTechniquesBench(log),
  sizing: async () => (await import('./lib/build-bench.js')).runSizingBench(log),
  'code-latency': async () => (await import('./lib/code-latency-bench.js')).runCodeLatencyBench(log),
  'build-latency': async () => (await import('./lib/build-bench.js')).runBuildLatencyBench(log),
  'build-floor': async () => (await import('./lib/build-bench.js')).runBuildFloorBench(log),
  walk: async () => {
    const { runWalkBench, walkRows } = await import('./lib/walk-bench.js')
    return walkRows(await runWalkBench({ runs: quick ? 3 : 5, progress: log }))
  },
  outlines: async () => (await import('./lib/outline-bench.js')).runOutlineBench(log),
  'outline-cost': async () => (await import('./lib/outline-cost-bench.js')).runOutlineCostBench(log, { rounds: quick ? 1 : 3 }),
  search: async () => {
    if (!existsSync(searchModule)) throw new Error('bench/search.mjs is not there')
    const { runSearchBench, searchBenchTable } = await import(searchModule.href)
    const results = await runSearchBench({ runs: quick ? 3 : 5, coldRuns: quick ? 1 : 3, bin: values.bin, progress: log })
    return { rows: results.map(searchRow), markdown: `## search_regex over linux-source-6.1\n\n${searchBenchTable(results)}` }
  }
}

/** One search-bench result as a table row (goal, issues 3, 31 and 43: ≤ 1.2× raw `rg -c` warm and cold, no event-loop stall over 100 ms). */
function searchRow (r) {
  const cold = r.cold_ratio_vs_rg_c === undefined ? '' : `; cold ${r.cold_ours_ms} ms beside \`rg -c\` ${r.cold_rg_c_ms} ms (${r.cold_ratio_vs_rg_c}×, max loop delay ${r.cold_max_event_loop_delay_ms} ms)`
  const before = r.before_ratio_vs_rg_c === undefined ? '' : `; other build ${r.before_ratio_vs_rg_c}× warm (CPU ${r.before_cpu_ratio_vs_rg_c}×)${r.cold_before_ratio_vs_rg_c === undefined ? '' : `, ${r.cold_before_ratio_vs_rg_c}× cold`}`
  // A stall counts only above the delay this machine shows while we merely drain raw rg (its noise floor).
  const calm = (delay) => delay === undefined || delay < 100 || delay <= r.noise_floor_delay_ms
  return {
    name: `search_regex first page, ${r.query} (\`${r.pattern}\`), Linux 6.1 tree`,
    measured: `ours ${r.ours_first_page_ms} ms`,
    baseline: `\`rg -c\` ${r.raw_rg_c_ms} ms`,
    ratio: r.ratio_vs_rg_c,
    goal: '≤ 1.2× warm and cold, no loop stall > 100 ms',
    pass: r.ratio_vs_rg_c <= 1.2 && (r.cold_ratio_vs_rg_c ?? 0) <= 1.2 && calm(r.max_event_loop_delay_ms) && calm(r.cold_max_event_loop_delay_ms),
    cpuRatio: r.cpu_ratio_vs_rg_c,
    note: `${r.ratio_vs_rg_n}× \`rg -n\`, ${r.ratio_vs_rg_json}× \`rg --json\`; ${r.matching_lines} lines; max loop delay ${r.max_event_loop_delay_ms} ms (floor ${r.noise_floor_delay_ms} ms)${cold}${before}`
  }
}

const params = `HTTP ${options.connections} connections, ${options.warmup} s warm-up + ${options.duration} s per contender × ${options.rounds} round(s); ` +
  `stdio ${options.count} requests (${options.warmupCount} warm-up), window ${options.window}, ${options.rounds} round(s); cold start median of ${options.runs}`
const startEnvironment = environment(params)

const rows = []
const extra = []
const failures = []
for (const section of sections) {
  const runner = runners[section]
  if (runner === undefined) {
    failures.push(`${section}: unknown section (known: ${Object.keys(runners).join(', ')})`)
    continue
  }
  log(`== ${section}`)
  try {
    const out = await runner()
    // Sections return table rows; the search bench may also return { rows, markdown } or Markdown text.
    if (typeof out === 'string') extra.push(out)
    else if (Array.isArray(out)) rows.push(...out)
    else if (out !== undefined) {
      if (Array.isArray(out.rows)) rows.push(...out.rows)
      if (typeof out.markdown === 'string') extra.push(out.markdown)
    }
  } catch (err) {
    failures.push(`${section}: ${err.message.split('\n')[0]}`)
    log(`   ${section} failed: ${err.stack}`)
  }
}

const command = `npm run bench${process.argv.length > 2 ? ' -- ' + process.argv.slice(2).join(' ') : ''}`
process.stdout.write('\n' + table(rows) + '\n')
if (failures.length > 0) process.stdout.write('\nFailed sections:\n' + failures.map(f => `- ${f}`).join('\n') + '\n')
for (const block of extra) process.stdout.write('\n' + block + '\n')

if (!values['no-write']) {
  mkdirSync(dirname(outFile), { recursive: true })
  writeFileSync(outFile, document({ rows, environment: startEnvironment, failures, extra, command }))
  log(`\nwrote ${outFile}`)
  // Only a full run speaks for every row of bench/README.md's summary.
  if (values.only === undefined && !quick && failures.length === 0) {
    const { updateReadme } = await import('./lib/readme-summary.js')
    const readme = new URL('./README.md', import.meta.url)
    if (updateReadme(readme, readFileSync(outFile, 'utf8'))) log('updated the summary in bench/README.md')
  }
  // The retrieval figures have a block of their own, written by a run that asked every tree.
  if (sections.includes('retrieval') && process.env.BENCH_RETRIEVAL_TREES === undefined && retrievalPart === '' && process.env.BENCH_RETRIEVAL_BIN === undefined && !failures.some(f => f.startsWith('retrieval'))) {
    const { updateRetrieval } = await import('./lib/readme-summary.js')
    if (updateRetrieval(new URL('./README.md', import.meta.url), readFileSync(outFile, 'utf8'))) log('updated the retrieval figures in bench/README.md')
  }
}
const goalMissed = rows.some(r => r.pass === false)
process.exitCode = failures.length > 0 || (values.strict && goalMissed) ? 1 : 0
