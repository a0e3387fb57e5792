// Every peer in one table: the bare-Fastify floor, ours, the SDK v1, the SDK v2 (on its Fastify
// adapter) and FastMCP, each stateless and stateful where it has both, serving the same echo tool.
// Per contender: throughput at 10 connections (min / median / max over rounds, order rotated each
// round), server CPU per request, p50 latency at one connection, and RSS after start and after load.
import { readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { cannon, fmt, median, MCP_HEADERS, post, sequentialP50, startServer, stopChild } from './measure.js'
import { ECHO_ARGS, ECHO_RESULT } from './synthetic-tools.js'

const script = (name) => new URL(`../servers/${name}`, import.meta.url).pathname
const PROBE = new URL('./soak-probe.cjs', import.meta.url).pathname
const IDLE_SESSIONS = 1000
const CALL = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: ECHO_ARGS } })
const INITIALIZE = JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench', version: '1' } } })
const INITIALIZED = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })

/** Contenders: label, server script and argv; `stateful` ones get a session opened first. */
const CONTENDERS = [
  { name: 'floor', label: 'bare Fastify (floor)', script: 'floor-http.js' },
  { name: 'ours', label: 'workspace-mcp', mode: 'stateless', script: 'ours-http.js' },
  { name: 'ours-s', label: 'workspace-mcp', mode: 'stateful', script: 'ours-http.js' },
  { name: 'sdk1', label: 'SDK v1 (`@modelcontextprotocol/sdk`)', mode: 'stateless', script: 'sdk-http.js' },
  { name: 'sdk1-s', label: 'SDK v1 (`@modelcontextprotocol/sdk`)', mode: 'stateful', script: 'sdk-http.js' },
  { name: 'sdk2', label: 'SDK v2 (`@modelcontextprotocol/server` + `/fastify`)', mode: 'stateless', script: 'sdk2-http.js' },
  { name: 'sdk2-s', label: 'SDK v2 (`@modelcontextprotocol/server` + `/fastify`)', mode: 'stateful', script: 'sdk2-http.js' },
  { name: 'fastmcp', label: 'FastMCP (`fastmcp`)', mode: 'stateless', script: 'fastmcp-http.js' },
  { name: 'fastmcp-s', label: 'FastMCP (`fastmcp`)', mode: 'stateful', script: 'fastmcp-http.js' }
]

/** Resident set size of a process, MB (Linux /proc). */
function rssMb (pid) {
  const match = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  return match === null ? NaN : Number(match[1]) / 1024
}

/** The JSON-RPC message in a response body: plain JSON, or the first `data:` line of an SSE body. */
function messageOf (body) {
  const text = body.startsWith('{') ? body : /^data: (.*)$/m.exec(body)?.[1] ?? ''
  try { return JSON.parse(text) } catch { return undefined }
}

/** Opens a session when the contender is stateful; returns the headers every later POST carries. */
async function headersFor (contender, port) {
  if (contender.mode !== 'stateful') return MCP_HEADERS
  const opened = await post(port, INITIALIZE)
  const id = opened.headers['mcp-session-id']
  if (opened.status !== 200 || typeof id !== 'string') throw new Error(`${contender.name}: initialize gave ${opened.status} without a session id: ${opened.body.slice(0, 200)}`)
  const headers = { ...MCP_HEADERS, 'mcp-session-id': id }
  const initialized = await post(port, INITIALIZED, headers)
  if (initialized.status !== 202) throw new Error(`${contender.name}: notifications/initialized gave ${initialized.status}`)
  return headers
}

/** heapUsed after two full GCs, asked of the server's preloaded probe over IPC. */
function heapAfterGc (child) {
  const id = Math.random()
  return new Promise((resolve, reject) => {
    const guard = setTimeout(() => reject(new Error('no memory sample within 10 s')), 10000)
    const onMessage = (message) => {
      if (message?.type !== 'sample' || message.id !== id) return
      clearTimeout(guard)
      child.off('message', onMessage)
      resolve(message.heapUsed)
    }
    child.on('message', onMessage)
    child.send({ type: 'sample', id, gc: true })
  })
}

/**
 * Heap per idle session, KB: opens IDLE_SESSIONS sessions (initialize + initialized each, 50 at a time;
 * FastMCP takes ~1 s to answer an initialize) and leaves them idle. Bounded at 60 s: fewer sessions are
 * then opened, and their count is reported.
 */
async function heapPerSession (contender) {
  const before = await heapAfterGc(contender.child)
  const deadline = Date.now() + 60_000
  let opened = 0
  while (opened < IDLE_SESSIONS && Date.now() < deadline) {
    const batch = Math.min(50, IDLE_SESSIONS - opened)
    await Promise.all(Array.from({ length: batch }, () => headersFor(contender, contender.port)))
    opened += batch
  }
  const after = await heapAfterGc(contender.child)
  return { kb: (after - before) / opened / 1024, opened }
}

async function start (contender, resultFile) {
  const args = contender.name === 'floor' ? [resultFile] : ['call', contender.mode]
  const server = await startServer(script(contender.script), args, { execArgv: ['--expose-gc', '--require', PROBE], keepIpc: true })
  const rssStart = rssMb(server.child.pid)
  const headers = await headersFor(contender, server.port)
  const answer = await post(server.port, CALL, headers)
  const message = messageOf(answer.body)
  if (answer.status !== 200 || JSON.stringify(message?.result) !== JSON.stringify(ECHO_RESULT)) {
    throw new Error(`${contender.name}: unexpected echo answer ${answer.status} ${answer.body.slice(0, 200)}`)
  }
  return { ...contender, ...server, headers, rssStart, rps: [], cpu: [], p50: [] }
}

const spread = (values, format) => values.length === 0 ? '—' : `${format(Math.min(...values))} / **${format(median(values))}** / ${format(Math.max(...values))}`

/** Runs the peer table; returns its Markdown (one row per contender). */
export async function runPeersBench (options, log) {
  const { connections, duration, warmup, rounds } = options
  const resultFile = join(tmpdir(), `wmcp-peers-${process.pid}.json`)
  writeFileSync(resultFile, JSON.stringify(ECHO_RESULT))
  const running = []
  try {
    for (const contender of CONTENDERS) running.push(await start(contender, resultFile))
    for (let round = 0; round < rounds; round++) {
      // Rotated each round, so no contender always runs first (or last) on a warming machine.
      const order = running.map((_, i) => running[(i + round) % running.length])
      for (const c of order) {
        if (warmup > 0) await cannon(c.port, CALL, { connections, duration: warmup, headers: c.headers })
        const run = await cannon(c.port, CALL, { connections, duration, pid: c.child.pid, headers: c.headers })
        if (run.failures > 0) throw new Error(`${c.name}: ${run.failures} failed requests of ${run.total}`)
        const p50 = await sequentialP50(c.port, CALL, { headers: c.headers, count: options.latencyCount })
        c.rps.push(run.rps)
        c.cpu.push(run.cpuPerRequest)
        c.p50.push(p50)
        log(`  peers ${c.name.padEnd(9)} round ${round + 1}: ${fmt(run.rps)} req/s, ${run.cpuPerRequest.toFixed(1)} µs CPU/req, c=1 p50 ${p50.toFixed(3)} ms`)
      }
    }
    for (const c of running) {
      c.rssLoaded = rssMb(c.child.pid)
      if (c.mode === 'stateful') {
        c.perSession = await heapPerSession(c)
        log(`  peers ${c.name.padEnd(9)} heap per idle session: ${c.perSession.kb.toFixed(1)} KB over ${c.perSession.opened} sessions`)
      }
    }
    const floor = running[0]
    const lines = [
      `## Every peer: HTTP \`tools/call\` echo, ${connections} connections (${rounds} rounds of ${duration} s)`,
      '',
      `| Server | Mode | req/s min / **median** / max | CPU µs/req (median) | CPU ratio to floor | p50 at 1 conn, ms (ratio to floor) | RSS after start → after load, MB | heap per idle session (${IDLE_SESSIONS}), KB |`,
      '|---|---|---|---|---|---|---|---|'
    ]
    for (const c of running) {
      const cpu = median(c.cpu)
      const ratio = median(floor.cpu) / cpu
      // Above 1.0× a contender did less work per request than the floor: noise, not a win.
      const ratioText = c === floor ? '1.00×' : ratio > 1 ? `${ratio.toFixed(2)}× (noise: above the floor)` : `${ratio.toFixed(2)}×`
      const p50 = median(c.p50)
      const perSession = c.perSession === undefined ? '—' : `${c.perSession.kb.toFixed(1)}${c.perSession.opened < IDLE_SESSIONS ? ` (${c.perSession.opened} opened in 60 s)` : ''}`
      lines.push(`| ${c.label} | ${c.mode ?? '—'} | ${spread(c.rps, fmt)} | ${cpu.toFixed(1)} | ${ratioText} | ${p50.toFixed(3)} (${(p50 / median(floor.p50)).toFixed(2)}×) | ${c.rssStart.toFixed(0)} → ${c.rssLoaded.toFixed(0)} | ${perSession} |`)
    }
    lines.push('', 'Stateful contenders answer on one session opened before the run (initialize, notifications/initialized); stateless ones get a fresh session per POST, as each documents. All answer JSON (no SSE) with the same result. ' +
      `p50 at 1 conn: ${options.latencyCount} sequential POSTs on one kept-alive connection. Heap per idle session: heapUsed after two full GCs (\`--expose-gc\`), before and after opening ${IDLE_SESSIONS} sessions that then stay idle.`)
    return { rows: [], markdown: lines.join('\n') }
  } finally {
    for (const c of running) await stopChild(c.child)
  }
}
