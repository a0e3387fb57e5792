// stdio scenarios: pipelined tools/call throughput and cold start (spawn → initialize response) of the
// shipped bin. Contenders: ours; the floor, a bare newline JSON-RPC loop that writes each tick's answers
// in one write as ours does (and the same loop writing each answer on its own, shown beside it); the
// SDK v1's StdioServerTransport + Server, the SDK v2's McpServer, FastMCP.
import { busyNote, coldStart, fmt, median, micros, stdioThroughput } from './measure.js'
import { ECHO_ARGS } from './synthetic-tools.js'

const ROOT = new URL('../../', import.meta.url).pathname
const SERVERS = new URL('../servers/', import.meta.url)
const script = (name) => new URL(name, SERVERS).pathname
const node = process.execPath

const callRequest = (id) => `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"echo","arguments":${JSON.stringify(ECHO_ARGS)}}}`
const pingRequest = (id) => `{"jsonrpc":"2.0","id":${id},"method":"ping"}`

/** Pipelined throughput rows: ours and the SDK against the bare loop, plus ping through the shipped bin. */
export async function runStdioBench (options, log) {
  const { count, warmup, window, rounds } = options
  const contenders = {
    bare: { args: [script('bare-stdio.js')], makeRequest: callRequest },
    bareCoalesced: { args: [script('bare-stdio.js'), '--coalesce'], makeRequest: callRequest },
    ours: { args: [script('ours-stdio.js')], makeRequest: callRequest },
    sdk: { args: [script('sdk-stdio.js')], makeRequest: callRequest },
    sdk2: { args: [script('sdk2-stdio.js')], makeRequest: callRequest },
    fastmcp: { args: [script('fastmcp-stdio.js')], makeRequest: callRequest },
    barePing: { args: [script('bare-stdio.js'), '--coalesce'], makeRequest: pingRequest },
    binPing: { args: [`${ROOT}dist/bin/cli.js`, 'stdio'], makeRequest: pingRequest }
  }
  const rates = Object.fromEntries(Object.keys(contenders).map(k => [k, []]))
  const cpu = Object.fromEntries(Object.keys(contenders).map(k => [k, []]))
  for (let round = 0; round < rounds; round++) {
    const order = Object.keys(contenders)
    if (round % 2 === 1) order.reverse()
    for (const name of order) {
      const { args, makeRequest } = contenders[name]
      const { rate, cpuPerMessage } = await stdioThroughput({ command: node, args, cwd: ROOT, makeRequest, count, warmup, window })
      rates[name].push(rate)
      if (cpuPerMessage !== undefined) cpu[name].push(cpuPerMessage)
      log(`  stdio ${name.padEnd(13)} round ${round + 1}: ${fmt(rate)} msg/s, ${micros(cpuPerMessage)} server CPU/msg`)
    }
  }
  const m = Object.fromEntries(Object.entries(rates).map(([k, v]) => [k, median(v)]))
  const c = Object.fromEntries(Object.entries(cpu).map(([k, v]) => [k, v.length === rounds ? median(v) : undefined]))
  const range = (name) => `${fmt(Math.min(...rates[name]))}–${fmt(Math.max(...rates[name]))}`
  const shape = `${fmt(count)} requests, ${window} in flight`
  return [
    {
      name: 'stdio `tools/call` echo, pipelined',
      measured: `ours ${fmt(m.ours)} msg/s (${range('ours')})`,
      baseline: `bare loop ${fmt(m.bareCoalesced)} msg/s (${range('bareCoalesced')})`,
      ratio: m.ours / m.bareCoalesced,
      vsFloor: true,
      cpuRatio: c.bareCoalesced / c.ours,
      goal: '≥ 0.7×',
      pass: c.bareCoalesced / c.ours >= 0.7,
      note: `CPU/msg ${micros(c.ours)} vs ${micros(c.bareCoalesced)}; ${shape}; both write each tick's answers in one write${busyNote('the bare loop', m.bareCoalesced, c.bareCoalesced)}`
    },
    {
      name: 'stdio `tools/call` echo, pipelined — against a bare loop that writes each answer on its own',
      measured: `ours ${fmt(m.ours)} msg/s`,
      baseline: `bare loop, one write per answer ${fmt(m.bare)} msg/s (${range('bare')})`,
      ratio: m.ours / m.bare,
      cpuRatio: c.bare / c.ours,
      goal: 'info',
      pass: undefined,
      note: `CPU/msg ${micros(c.ours)} vs ${micros(c.bare)}: what coalescing saves a pipelining client (a write per answer was this loop's floor before, and ours)`
    },
    {
      name: 'stdio `tools/call` echo, pipelined — SDK v1 peer',
      measured: `SDK ${fmt(m.sdk)} msg/s`,
      baseline: `bare loop ${fmt(m.bare)} msg/s`,
      ratio: m.sdk / m.bare,
      cpuRatio: c.bare / c.sdk,
      goal: 'info (issue: 0.08×)',
      pass: undefined,
      note: `CPU/msg ${micros(c.sdk)} vs ${micros(c.bare)}; ours is ${(m.ours / m.sdk).toFixed(1)}× the SDK`
    },
    ...[['sdk2', 'SDK v2 peer (`@modelcontextprotocol/server`)'], ['fastmcp', 'FastMCP peer (`fastmcp`)']].map(([name, label]) => ({
      name: `stdio \`tools/call\` echo, pipelined — ${label}`,
      measured: `${fmt(m[name])} msg/s (${range(name)})`,
      baseline: `bare loop ${fmt(m.bare)} msg/s`,
      ratio: m[name] / m.bare,
      cpuRatio: c.bare / c[name],
      goal: 'info',
      pass: undefined,
      note: `CPU/msg ${micros(c[name])} vs ${micros(c.bare)}; ours is ${(m.ours / m[name]).toFixed(1)}× it`
    })),
    {
      name: 'stdio `ping`, pipelined, shipped bin (dist/bin/cli.js)',
      measured: `bin ${fmt(m.binPing)} msg/s`,
      baseline: `bare loop ${fmt(m.barePing)} msg/s`,
      ratio: m.binPing / m.barePing,
      vsFloor: true,
      cpuRatio: c.barePing / c.binPing,
      goal: 'info',
      pass: undefined,
      note: `CPU/msg ${micros(c.binPing)} vs ${micros(c.barePing)}; product tools, default config${busyNote('the bare loop', m.barePing, c.barePing)}`
    }
  ]
}

/** Cold start rows: spawn → initialize response, medians of alternating runs. */
export async function runColdBench (options, log) {
  const { runs } = options
  // The bare loop as a file: it is an ES module (import.meta), which `node -e` cannot run (the section failed
  // on a fresh clone).
  const contenders = {
    bare: [node, script('bare-stdio.js')],
    bundle: [node, `${ROOT}dist/bin/cli.js`, 'stdio'],
    tsc: [node, `${ROOT}dist/src/cli.js`, 'stdio']
  }
  const times = { bare: [], bundle: [], tsc: [] }
  // One unmeasured start each warms the page cache.
  for (const [command, ...args] of Object.values(contenders)) await coldStart({ command, args, cwd: ROOT })
  for (let i = 0; i < runs; i++) {
    for (const [name, [command, ...args]] of Object.entries(contenders)) {
      times[name].push(await coldStart({ command, args, cwd: ROOT }))
    }
  }
  const m = Object.fromEntries(Object.entries(times).map(([k, v]) => [k, median(v)]))
  log(`  cold start medians (ms): bare ${m.bare.toFixed(1)}, bundle ${m.bundle.toFixed(1)}, tsc output ${m.tsc.toFixed(1)}`)
  return [
    {
      name: 'stdio cold start, spawn → initialize (shipped bin, dist/bin/cli.js)',
      measured: `ours ${m.bundle.toFixed(0)} ms`,
      baseline: `bare loop (bench/servers/bare-stdio.js) ${m.bare.toFixed(0)} ms`,
      ratio: m.bundle / m.bare,
      goal: '≤ 1.8×',
      pass: m.bundle / m.bare <= 1.8,
      note: `median of ${runs} alternating runs`
    },
    {
      name: 'stdio cold start, unbundled tsc output (dist/src/cli.js)',
      measured: `ours ${m.tsc.toFixed(0)} ms`,
      baseline: `bare loop (bench/servers/bare-stdio.js) ${m.bare.toFixed(0)} ms`,
      ratio: m.tsc / m.bare,
      goal: 'info',
      pass: undefined,
      note: `median of ${runs} alternating runs`
    }
  ]
}
