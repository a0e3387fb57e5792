// HTTP scenarios: ours (built Fastify app, stateless), the bare-Fastify floor returning ours' exact
// bytes, and the SDK v1's own Streamable HTTP server, each loaded by autocannon in turn; medians of
// the rounds, with their range.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { busyNote, cannon, fmt, median, micros, post, startServer, stopChild } from './measure.js'
import { ECHO_ARGS, ECHO_RESULT, LIST_SIZE } from './synthetic-tools.js'

const SERVERS = new URL('../servers/', import.meta.url)
const script = (name) => new URL(name, SERVERS).pathname

const SCENARIOS = {
  call: {
    title: 'HTTP `tools/call` echo',
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: ECHO_ARGS } }),
    check: (result) => JSON.stringify(result) === JSON.stringify(ECHO_RESULT)
  },
  list: {
    title: `HTTP \`tools/list\` (${LIST_SIZE} tools)`,
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
    check: (result) => Array.isArray(result?.tools) && result.tools.length === LIST_SIZE && result.nextCursor === undefined
  }
}

/** Sends one request and returns the parsed JSON-RPC result, or throws with what came back. */
async function resultOf (name, port, body, check) {
  const response = await post(port, body)
  let parsed
  try { parsed = JSON.parse(response.body) } catch { parsed = undefined }
  if (response.status !== 200 || parsed?.result === undefined || !check(parsed.result)) {
    throw new Error(`${name}: unexpected answer ${response.status} ${response.body.slice(0, 300)}`)
  }
  return { response, result: parsed.result }
}

/** Runs one scenario: three servers, `rounds` alternating passes; returns table rows. */
async function runScenario (key, options, log) {
  const { title, body, check } = SCENARIOS[key]
  const { connections, duration, warmup, rounds } = options
  const dir = mkdtempSync(join(tmpdir(), 'wmcp-bench-'))
  const started = []
  try {
    const ours = await startServer(script('ours-http.js'), [key])
    started.push(ours)
    const oursAnswer = await resultOf('ours', ours.port, body, check)
    // The floor answers with ours' exact result bytes, so both ship the same payload.
    const resultFile = join(dir, 'result.json')
    writeFileSync(resultFile, JSON.stringify(oursAnswer.result))
    const floor = await startServer(script('floor-http.js'), [resultFile])
    started.push(floor)
    const floorAnswer = await resultOf('floor', floor.port, body, check)
    if (floorAnswer.response.body !== oursAnswer.response.body) throw new Error('floor and ours answer different bytes')
    const sdk = await startServer(script('sdk-http.js'), [key])
    started.push(sdk)
    const sdkAnswer = await resultOf('sdk', sdk.port, body, check)

    const contenders = { floor, ours, sdk }
    const rps = { floor: [], ours: [], sdk: [] }
    const cpu = { floor: [], ours: [], sdk: [] }
    for (let round = 0; round < rounds; round++) {
      const order = round % 2 === 0 ? ['floor', 'ours', 'sdk'] : ['sdk', 'ours', 'floor']
      for (const name of order) {
        const { port, child } = contenders[name]
        if (warmup > 0) await cannon(port, body, { connections, duration: warmup })
        const run = await cannon(port, body, { connections, duration, pid: child.pid })
        if (run.failures > 0) throw new Error(`${key}/${name}: ${run.failures} failed requests of ${run.total}`)
        rps[name].push(run.rps)
        if (run.cpuPerRequest !== undefined) cpu[name].push(run.cpuPerRequest)
        log(`  ${key.padEnd(5)} ${name.padEnd(5)} round ${round + 1}: ${fmt(run.rps)} req/s, ${micros(run.cpuPerRequest)} server CPU/req (p50 ${run.p50} ms, p99 ${run.p99} ms)`)
      }
    }
    const cpuOf = (name) => cpu[name].length === rounds ? median(cpu[name]) : undefined
    const [floorCpu, oursCpu, sdkCpu] = [cpuOf('floor'), cpuOf('ours'), cpuOf('sdk')]
    const floorRps = median(rps.floor)
    const oursRps = median(rps.ours)
    const sdkRps = median(rps.sdk)
    const range = (name) => `${fmt(Math.min(...rps[name]))}–${fmt(Math.max(...rps[name]))}`
    const bytes = (answer) => `${Buffer.byteLength(answer.response.body)} B`
    return [
      {
        name: `${title}, ${connections} conn`,
        measured: `ours ${fmt(oursRps)} req/s (${range('ours')})`,
        baseline: `bare Fastify ${fmt(floorRps)} req/s (${range('floor')})`,
        ratio: oursRps / floorRps,
        cpuRatio: floorCpu / oursCpu,
        vsFloor: true,
        // Issue 10's goals, judged on CPU per request: throughput ratios wander when the cores are shared.
        goal: key === 'call' ? '≥ 0.85× (CPU)' : '≥ 0.9× (CPU)',
        pass: floorCpu / oursCpu >= (key === 'call' ? 0.85 : 0.9),
        note: `CPU/req ${micros(oursCpu)} vs ${micros(floorCpu)}; response ${bytes(oursAnswer)} (floor: same bytes)${busyNote('the floor', floorRps, floorCpu)}`
      },
      {
        name: `${title}, ${connections} conn — SDK v1 peer`,
        measured: `SDK ${fmt(sdkRps)} req/s (${range('sdk')})`,
        baseline: `bare Fastify ${fmt(floorRps)} req/s`,
        ratio: sdkRps / floorRps,
        cpuRatio: floorCpu / sdkCpu,
        goal: `info (issue: ${key === 'call' ? '0.20' : '0.01'}×)`,
        pass: undefined,
        note: `CPU/req ${micros(sdkCpu)} vs ${micros(floorCpu)}; ours is ${(oursRps / sdkRps).toFixed(1)}× the SDK; SDK response ${bytes(sdkAnswer)}`
      }
    ]
  } finally {
    for (const server of started) await stopChild(server.child)
    rmSync(dir, { recursive: true, force: true })
  }
}

/** Runs the HTTP scenarios; returns table rows. */
export async function runHttpBench (options, log) {
  const rows = []
  for (const key of ['call', 'list']) rows.push(...await runScenario(key, options, log))
  return rows
}
