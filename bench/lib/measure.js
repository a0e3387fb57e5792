// Measurement primitives: child processes (started and stopped by PID), one HTTP request,
// autocannon runs, a pipelining stdio driver and cold-start timing. Every wait is bounded.
import { fork, spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { Agent, request } from 'node:http'
import { performance } from 'node:perf_hooks'
import autocannon from 'autocannon'

const START_TIMEOUT_MS = 20000
const STOP_TIMEOUT_MS = 3000

/** Median of a list of numbers. */
export function median (values) {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
}

const CLOCK_TICKS_PER_SECOND = 100

/**
 * CPU seconds (user + system) a process has used so far, from /proc (Linux); undefined elsewhere.
 * CPU per request is steadier than requests/s on a busy machine, so the report shows both.
 */
export function cpuSeconds (pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND
  } catch {
    return undefined
  }
}

/** Microseconds of CPU per operation between two cpuSeconds() readings. */
export function cpuMicros (before, after, operations) {
  return before === undefined || after === undefined || operations === 0 ? undefined : (after - before) * 1e6 / operations
}

/** Thousands separators, no decimals. */
export function fmt (n) {
  return Math.round(n).toLocaleString('en-US')
}

/** `12.3 µs`, or `n/a` when CPU time could not be read. */
export function micros (value) {
  return value === undefined || !Number.isFinite(value) ? 'n/a' : `${value.toFixed(1)} µs`
}

/**
 * Note for a baseline that was not CPU-bound (rate × CPU per op well under one core): then the load
 * generator, not the baseline, set the pace, and the CPU ratio is the one to trust.
 */
export function busyNote (label, rate, cpuPerOp) {
  if (cpuPerOp === undefined) return ''
  const share = rate * cpuPerOp / 1e6
  return share < 0.8 ? `; ${label} used ${Math.round(share * 100)} % of a core (paced by the load generator or other processes: trust the CPU ratio)` : ''
}

/** Forks a bench server script that reports `{ port }` over IPC once it listens; stdout/stderr go to /dev/null. */
export async function startServer (script, args = [], { env = {}, execArgv = [], keepIpc = false } = {}) {
  const child = fork(script, args, { stdio: ['ignore', 'ignore', 'pipe', 'ipc'], env: { ...process.env, ...env }, execArgv })
  let stderr = ''
  child.stderr.on('data', chunk => { if (stderr.length < 8192) stderr += chunk })
  const port = await new Promise((resolve, reject) => {
    const guard = setTimeout(() => reject(new Error(`${script} did not report a port within ${START_TIMEOUT_MS} ms\n${stderr}`)), START_TIMEOUT_MS)
    child.once('message', (msg) => { clearTimeout(guard); resolve(msg.port) })
    child.once('exit', (code) => { clearTimeout(guard); reject(new Error(`${script} exited with ${code}\n${stderr}`)) })
  })
  if (!keepIpc) child.disconnect()
  return { child, port, stderr: () => stderr }
}

/** Stops a child by its PID: SIGTERM, then SIGKILL after a bounded wait. */
export async function stopChild (child) {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise(resolve => child.once('exit', resolve))
  process.kill(child.pid, 'SIGTERM')
  const timer = setTimeout(() => { if (child.exitCode === null && child.signalCode === null) process.kill(child.pid, 'SIGKILL') }, STOP_TIMEOUT_MS)
  await exited
  clearTimeout(timer)
}

/** Headers a Streamable HTTP client sends on every POST. */
export const MCP_HEADERS = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2025-06-18'
}

/** One POST to 127.0.0.1:port/mcp; resolves { status, body }. */
export function post (port, body, headers = MCP_HEADERS) {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/mcp', method: 'POST', headers, timeout: 10000 }, (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', chunk => { text += chunk })
      res.on('end', () => resolve({ status: res.statusCode, body: text, headers: res.headers }))
    })
    req.on('timeout', () => req.destroy(new Error('request timed out')))
    req.on('error', reject)
    req.end(body)
  })
}

/** Median latency (ms) of `count` sequential POSTs on one kept-alive connection (c=1, sub-millisecond resolution). */
export async function sequentialP50 (port, body, { headers = MCP_HEADERS, count = 2000 } = {}) {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 })
  const times = []
  try {
    for (let i = 0; i < count; i++) {
      const started = performance.now()
      await new Promise((resolve, reject) => {
        const req = request({ host: '127.0.0.1', port, path: '/mcp', method: 'POST', headers, agent, timeout: 10000 }, (res) => {
          res.resume()
          res.on('end', () => res.statusCode === 200 ? resolve() : reject(new Error(`status ${res.statusCode}`)))
        })
        req.on('timeout', () => req.destroy(new Error('request timed out')))
        req.on('error', reject)
        req.end(body)
      })
      times.push(performance.now() - started)
    }
  } finally {
    agent.destroy()
  }
  return median(times)
}

/** Runs autocannon against 127.0.0.1:port/mcp with a fixed body; returns requests/s and latency. */
export async function cannon (port, body, { connections = 10, duration = 5, pid, headers = MCP_HEADERS } = {}) {
  const cpuBefore = pid === undefined ? undefined : cpuSeconds(pid)
  const result = await autocannon({
    url: `http://127.0.0.1:${port}/mcp`,
    method: 'POST',
    headers,
    body,
    connections,
    duration,
    pipelining: 1
  })
  const cpuAfter = pid === undefined ? undefined : cpuSeconds(pid)
  const failures = result.errors + result.timeouts + result.non2xx
  return {
    cpuPerRequest: cpuMicros(cpuBefore, cpuAfter, result.requests.total),
    rps: result.requests.average,
    total: result.requests.total,
    p50: result.latency.p50,
    p99: result.latency.p99,
    failures
  }
}

/** Reads newline-delimited messages from a child's stdout, calling onLine for each. */
function lineReader (stream, onLine) {
  let partial = ''
  stream.setEncoding('utf8')
  stream.on('data', (chunk) => {
    let text = partial + chunk
    let index = text.indexOf('\n')
    while (index !== -1) {
      onLine(text.slice(0, index))
      text = text.slice(index + 1)
      index = text.indexOf('\n')
    }
    partial = text
  })
}

const INITIALIZE = (id) => JSON.stringify({
  jsonrpc: '2.0',
  id,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench', version: '1.0.0' } }
})

/**
 * Spawns a stdio server, opens it with `handshake(0)` (initialize by default; a 2026-07-28
 * server/discover pins the modern era), then keeps `window` requests in flight until `count`
 * responses arrived (after `warmup` unmeasured ones). Every 128th response is parsed and
 * checked. Returns messages per second and the server's CPU µs per message.
 */
export async function stdioThroughput ({ command, args, cwd, env, makeRequest, count, warmup, window = 64, timeoutMs = 120000, handshake = INITIALIZE }) {
  const child = spawn(command, args, { cwd, env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'ignore'] })
  const failed = new Promise((resolve, reject) => child.once('exit', code => reject(new Error(`${command} ${args.join(' ')} exited with ${code}`))))
  failed.catch(() => {})
  let onLine = () => {}
  lineReader(child.stdout, line => onLine(line))
  try {
    await Promise.race([failed, new Promise((resolve, reject) => {
      onLine = (line) => {
        const msg = JSON.parse(line)
        if (msg.id === 0) msg.result !== undefined ? resolve() : reject(new Error(`initialize failed: ${line}`))
      }
      child.stdin.write(handshake(0) + '\n')
    })])
    if (handshake === INITIALIZE) child.stdin.write('{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    let nextId = 1
    const pipeline = (n) => Promise.race([failed, new Promise((resolve, reject) => {
      let sent = 0
      let received = 0
      const guard = setTimeout(() => reject(new Error(`stdio pipeline: ${received}/${n} responses after ${timeoutMs} ms`)), timeoutMs)
      const fill = () => {
        let batch = ''
        while (sent < n && sent - received < window) { batch += makeRequest(nextId++) + '\n'; sent++ }
        if (batch !== '') child.stdin.write(batch)
      }
      onLine = (line) => {
        received++
        if ((received & 127) === 0 || received === n) {
          const msg = JSON.parse(line)
          if (msg.result === undefined || msg.result.isError === true) { clearTimeout(guard); reject(new Error(`unexpected response: ${line.slice(0, 300)}`)); return }
        }
        if (received === n) { clearTimeout(guard); resolve(); return }
        if (sent - received <= window / 2) fill()
      }
      fill()
    })])
    await pipeline(warmup)
    const cpuBefore = cpuSeconds(child.pid)
    const started = performance.now()
    await pipeline(count)
    const seconds = (performance.now() - started) / 1000
    return { rate: count / seconds, cpuPerMessage: cpuMicros(cpuBefore, cpuSeconds(child.pid), count) }
  } finally {
    await endStdio(child)
  }
}

/** Closes a stdio child's stdin and waits (bounded) for it to exit; kills it by PID otherwise. */
async function endStdio (child) {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise(resolve => child.once('exit', resolve))
  child.stdin.end()
  const timer = setTimeout(() => { if (child.exitCode === null && child.signalCode === null) process.kill(child.pid, 'SIGKILL') }, STOP_TIMEOUT_MS)
  await exited
  clearTimeout(timer)
}

/** Milliseconds from spawn to the initialize response on stdout (the request is written at once). */
export async function coldStart ({ command, args, cwd, env }) {
  const started = performance.now()
  const child = spawn(command, args, { cwd, env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'ignore'] })
  try {
    return await new Promise((resolve, reject) => {
      const guard = setTimeout(() => reject(new Error(`${args.join(' ')}: no initialize response within 15 s`)), 15000)
      child.once('exit', code => { clearTimeout(guard); reject(new Error(`${args.join(' ')} exited with ${code} before answering`)) })
      lineReader(child.stdout, (line) => {
        const elapsed = performance.now() - started
        const msg = JSON.parse(line)
        if (msg.id !== 1) return
        clearTimeout(guard)
        if (msg.result?.protocolVersion === undefined) reject(new Error(`bad initialize response: ${line.slice(0, 300)}`))
        else resolve(elapsed)
      })
      child.stdin.write(INITIALIZE(1) + '\n')
    })
  } finally {
    child.removeAllListeners('exit')
    await endStdio(child)
  }
}
