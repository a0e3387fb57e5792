// Protocol eras side by side: the same echo tools/call through ours, as a 2025 request (stdio after
// initialize; HTTP stateless, one POST per call) and as a 2026-07-28 request (stdio pinned by a
// server/discover probe; HTTP with the routing headers and a _meta envelope). Alternating rounds in
// one run; the ratio is 2025 CPU per call over 2026 CPU per call (≥ 1× means 2026 costs no more).
import { busyNote, cannon, fmt, median, micros, MCP_HEADERS, post, startServer, stdioThroughput, stopChild } from './measure.js'
import { ECHO_ARGS } from './synthetic-tools.js'

const ROOT = new URL('../../', import.meta.url).pathname
const script = (name) => new URL(`../servers/${name}`, import.meta.url).pathname

const META = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} }
const legacyCall = (id) => `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"echo","arguments":${JSON.stringify(ECHO_ARGS)}}}`
const modernCall = (id) => `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"echo","arguments":${JSON.stringify(ECHO_ARGS)},"_meta":${JSON.stringify(META)}}}`
const discover = (id) => JSON.stringify({ jsonrpc: '2.0', id, method: 'server/discover', params: { _meta: META } })
const MODERN_HEADERS = { ...MCP_HEADERS, 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'echo' }

/** The eras rows: stdio and HTTP, 2026-07-28 against 2025 on the same server code. */
export async function runErasBench (options, log) {
  const { count, warmup, window, rounds, connections, duration } = options
  // Ours in each era, and the bare loop answering each era's bytes: the floor shows what the protocol's
  // larger messages cost by themselves, apart from the engine.
  const stdio = {
    legacy: { args: [script('ours-stdio.js')], handshake: undefined, makeRequest: legacyCall },
    modern: { args: [script('ours-stdio.js')], handshake: discover, makeRequest: modernCall },
    floorLegacy: { args: [script('bare-stdio.js'), '--coalesce'], handshake: undefined, makeRequest: legacyCall },
    floorModern: { args: [script('bare-stdio.js'), '--coalesce', '--modern'], handshake: discover, makeRequest: modernCall }
  }
  const rates = Object.fromEntries(Object.keys(stdio).map(k => [k, []]))
  const cpu = Object.fromEntries(Object.keys(stdio).map(k => [k, []]))
  for (let round = 0; round < rounds; round++) {
    const order = Object.keys(stdio)
    if (round % 2 === 1) order.reverse()
    for (const era of order) {
      const { args, handshake, makeRequest } = stdio[era]
      const run = await stdioThroughput({ command: process.execPath, args, cwd: ROOT, makeRequest, count, warmup, window, ...(handshake === undefined ? {} : { handshake }) })
      rates[era].push(run.rate)
      if (run.cpuPerMessage !== undefined) cpu[era].push(run.cpuPerMessage)
      log(`  eras stdio ${era.padEnd(11)} round ${round + 1}: ${fmt(run.rate)} msg/s, ${micros(run.cpuPerMessage)} server CPU/msg`)
    }
  }
  const server = await startServer(script('ours-http.js'), ['call'])
  const http = { legacy: { body: legacyCall(1), headers: MCP_HEADERS }, modern: { body: modernCall(1), headers: MODERN_HEADERS } }
  const rps = { legacy: [], modern: [] }
  const hcpu = { legacy: [], modern: [] }
  try {
    for (const era of ['legacy', 'modern']) {
      const answer = await post(server.port, http[era].body, http[era].headers)
      if (answer.status !== 200 || JSON.parse(answer.body).result?.content === undefined) throw new Error(`eras ${era}: ${answer.status} ${answer.body.slice(0, 300)}`)
    }
    for (let round = 0; round < rounds; round++) {
      for (const era of round % 2 === 0 ? ['legacy', 'modern'] : ['modern', 'legacy']) {
        const { body, headers } = http[era]
        await cannon(server.port, body, { connections, duration: 1, headers })
        const run = await cannon(server.port, body, { connections, duration, pid: server.child.pid, headers })
        if (run.failures > 0) throw new Error(`eras http ${era}: ${run.failures} failed requests of ${run.total}`)
        rps[era].push(run.rps)
        if (run.cpuPerRequest !== undefined) hcpu[era].push(run.cpuPerRequest)
        log(`  eras http  ${era.padEnd(6)} round ${round + 1}: ${fmt(run.rps)} req/s, ${micros(run.cpuPerRequest)} server CPU/req`)
      }
    }
  } finally {
    await stopChild(server.child)
  }
  const mid = (values) => values.length === rounds ? median(values) : undefined
  const row = (name, unit, r, c, shape) => ({
    name,
    measured: `2026-07-28 ${fmt(median(r.modern))} ${unit}`,
    baseline: `2025 ${fmt(median(r.legacy))} ${unit}`,
    ratio: median(r.modern) / median(r.legacy),
    cpuRatio: mid(c.legacy) / mid(c.modern),
    goal: '≥ 1.0× (CPU)',
    pass: mid(c.legacy) / mid(c.modern) >= 1,
    note: `CPU/call ${micros(mid(c.modern))} vs ${micros(mid(c.legacy))}; ${shape}${busyNote('the 2025 run', median(r.legacy), mid(c.legacy))}`
  })
  const overFloor = (era, floor) => mid(cpu[era]) - mid(cpu[floor])
  return [
    row('stdio `tools/call` echo, pipelined: 2026-07-28 against 2025', 'msg/s', rates, cpu, `${fmt(count)} requests, ${window} in flight; 2026 pinned by a server/discover probe`),
    {
      name: 'stdio `tools/call` echo, pipelined: the engine\'s own CPU per call above the bare loop, 2026-07-28 against 2025',
      measured: `2026-07-28 +${micros(overFloor('modern', 'floorModern'))}`,
      baseline: `2025 +${micros(overFloor('legacy', 'floorLegacy'))}`,
      ratio: overFloor('legacy', 'floorLegacy') / overFloor('modern', 'floorModern'),
      goal: 'info',
      pass: undefined,
      note: `the bare loop answering each era's bytes costs ${micros(mid(cpu.floorModern))} (2026) and ${micros(mid(cpu.floorLegacy))} (2025) per call: the protocol's larger messages, apart from any engine`
    },
    row('HTTP `tools/call` echo: 2026-07-28 against 2025 (stateless)', 'req/s', rps, hcpu, `${connections} connections × ${duration} s; 2026 with the routing headers and a _meta envelope, no session either way`)
  ]
}
