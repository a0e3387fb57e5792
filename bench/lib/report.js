// The results table (Markdown) and the header that says where and how it was measured.
import { execFileSync } from 'node:child_process'
import { cpus, loadavg, release, totalmem, type } from 'node:os'
import { fileURLToPath } from 'node:url'
import { sourcesHash, sourcesLine } from './sources.js'

/** One line per fact about the machine and the run. */
export function environment (params) {
  let commit = 'unknown'
  try {
    commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim()
  } catch {}
  const cpu = cpus()
  return [
    `- Date: ${new Date().toISOString()}`,
    `- Machine: ${cpu.length} × ${cpu[0]?.model ?? 'unknown CPU'}, ${(totalmem() / 2 ** 30).toFixed(1)} GiB, ${type()} ${release()}`,
    `- Node ${process.version}; commit ${commit}`,
    // What was measured, by content: test/docs/bench-results.test.ts names the parts changed since.
    sourcesLine(sourcesHash(fileURLToPath(new URL('../..', import.meta.url)))),
    `- Load average at start: ${loadavg().map(n => n.toFixed(2)).join(' ')} (the load generator and the server share these cores)`,
    `- Parameters: ${params}`
  ]
}

const ratioText = (r) => r === undefined || !Number.isFinite(r) ? '—' : `${r.toFixed(2)}×`
const passText = (p) => p === undefined ? '—' : p ? '✅ yes' : '❌ no'
/** Nothing does less work than the floor it is measured against: a ratio above 1.0× is noise, never a pass. */
const aboveFloor = (row) => row.vsFloor === true && (row.ratio > 1 || row.cpuRatio > 1)

/** The Markdown table: name, measured, baseline, ratio, goal, pass?, note. A row with `vsFloor` is judged noise above 1.0×. */
export function table (rows) {
  const lines = [
    '| Benchmark | Measured | Baseline (floor / peer) | Ratio | CPU ratio | Goal | Pass? | Note |',
    '|---|---|---|---|---|---|---|---|'
  ]
  for (const row of rows) {
    const pass = aboveFloor(row) ? '⚠️ noise (above the floor)' : passText(row.pass)
    lines.push(`| ${row.name} | ${row.measured} | ${row.baseline} | ${ratioText(row.ratio)} | ${ratioText(row.cpuRatio)} | ${row.goal} | ${pass} | ${row.note ?? ''} |`)
  }
  return lines.join('\n')
}

/** The whole results document; `environment` lines are taken when the run starts. */
export function document ({ rows, environment, failures, extra, command }) {
  const parts = [
    '# Benchmark results',
    '',
    `Command: \`${command}\``,
    '',
    ...environment,
    `- Load average at end: ${loadavg().map(n => n.toFixed(2)).join(' ')}`,
    '',
    table(rows)
  ]
  if (failures.length > 0) parts.push('', '## Sections that failed', '', ...failures.map(f => `- ${f}`))
  for (const block of extra) parts.push('', block)
  parts.push('',
    '**Ratio** is throughput (or time, for cold start and the guide) against the baseline, measured side by side in one run; the **Pass?** column judges it. ' +
    '**CPU ratio** is the baseline\'s server CPU time per request divided by ours (from /proc; 10 ms ticks), which stays meaningful when other ' +
    'processes compete for the cores; on an idle machine with a CPU-bound server the two agree. Absolute numbers depend on the machine and its load.', '')
  return parts.join('\n')
}
