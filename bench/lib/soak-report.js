// The soak's figures as a markdown report, with each goal from issue 12 beside what was measured.
const MB = 2 ** 20

/** Least-squares slope of [x, y] points, in y units per x unit (NaN with fewer than 3 points). */
export function slopePerMinute (points) {
  if (points.length < 3) return NaN
  const n = points.length
  const mx = points.reduce((s, [x]) => s + x, 0) / n
  const my = points.reduce((s, [, y]) => s + y, 0) / n
  let num = 0
  let den = 0
  for (const [x, y] of points) {
    num += (x - mx) * (y - my)
    den += (x - mx) ** 2
  }
  return den === 0 ? NaN : num / den
}

const percentile = (xs, p) => {
  const sorted = [...xs].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(p / 100 * sorted.length))]
}
const mb = (bytes) => `${(bytes / MB).toFixed(2)} MB`
const kb = (bytes) => `${(bytes / 1024).toFixed(1)} KB`

/** The report: `markdown`, and `failed` when a goal was missed or the server misbehaved. */
export function soakReport (r) {
  const loops = r.samples.map(s => s.loopP99Ms)
  const rss = r.samples.map(s => s.rss)
  const expectedFaults = (r.ops['injected fault (401/400)'] ?? 0) + (r.ops['tool error (expected)'] ?? 0)
  const goals = [
    ['RSS slope after warm-up', `${r.rssSlope >= 0 ? '+' : ''}${(r.rssSlope / MB).toFixed(3)} MB/min`, '< 1 MB/min', r.rssSlope < MB],
    ['V8 committed heap (heapTotal) slope after warm-up', r.heapTotalSlope === undefined || Number.isNaN(r.heapTotalSlope) ? 'n/a' : `${r.heapTotalSlope >= 0 ? '+' : ''}${(r.heapTotalSlope / MB).toFixed(3)} MB/min`, 'info (RSS growth beyond this is outside the main isolate)', true],
    ['post-GC heap slope after warm-up', `${r.heapSlope >= 0 ? '+' : ''}${(r.heapSlope / MB).toFixed(3)} MB/min`, 'info', true],
    [`heap per idle session (${r.idle.n} sessions)`, kb(r.idle.heapPerSession), '≤ 10 KB', r.idle.heapPerSession <= 10 * 1024],
    ['RSS per idle session', kb(r.idle.rssPerSession), 'info', true],
    ['heap left after closing them', kb(r.idle.heapBack), 'info', true],
    ['unexpected outcomes', `${r.unexpected} of ${r.operations} (${(100 * r.unexpected / Math.max(1, r.operations)).toFixed(3)} %)`, `0 (${expectedFaults} injected faults and expected tool errors excluded)`, r.unexpected === 0],
    ['GET stream retried after a 409 (own drop not yet seen)', String(r.streamRetries), 'info', true],
    ['event-loop delay p99 (per sample)', `median ${percentile(loops, 50).toFixed(1)} ms, worst ${Math.max(...loops).toFixed(1)} ms`, 'info', true],
    ['RSS', `${mb(Math.min(...rss))} – ${mb(Math.max(...rss))}, end ${mb(rss.at(-1))}`, 'info', true],
    ['server exit after SIGTERM', String(r.exitCode), '0 (drained)', r.exitCode === 0]
  ]
  const ops = Object.entries(r.ops).sort((a, b) => b[1] - a[1]).map(([k, v]) => `${k} ${v}`).join(', ')
  const markdown = [
    `## Soak: ${r.minutes} min, ${r.clients} clients, stateful HTTP with auth`,
    '',
    `${r.environment}. Warm-up ${r.warmupMinutes.toFixed(1)} min excluded from the slopes; ${r.samples.length} samples, each after a forced full GC.`,
    '',
    '| figure | measured | goal | |',
    '|---|---|---|---|',
    ...goals.map(([name, measured, goal, pass]) => `| ${name} | ${measured} | ${goal} | ${pass ? 'ok' : '**missed**'} |`),
    '',
    `Operations (${r.operations}, ${(r.operations / r.minutes / 60).toFixed(0)}/s): ${ops}.`,
    ...(r.examples.length > 0 ? ['', 'Unexpected outcomes (first ones):', '', ...r.examples.map(e => `- ${e}`)] : []),
    '',
    'Reproduce: `npm run soak` (10 min) or `npm run soak -- --minutes N`.'
  ].join('\n')
  return { markdown, failed: goals.some(([, , , pass]) => !pass) }
}
