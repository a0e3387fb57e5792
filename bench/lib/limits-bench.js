// The load limiter under a search storm (issue 11): the built server over HTTP (stateless) with 200
// clients each keeping one distinct search_regex in flight, while one client times a cheap call
// (list_directory path=".") back to back. Reports the cheap call's p50/p99 idle and under the storm,
// and how the searches ended (answered, BUSY tool error, HTTP 503, other). Bounded in time and count.
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const CLI = fileURLToPath(new URL('../../dist/bin/cli.js', import.meta.url))
const CALL_TIMEOUT_MS = 60_000

/** A tree of `files` files × 2,000 lines (~100 B each): every search reads all of it. */
function makeTree (files) {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'wmcp-bench-limits-')))
  for (let f = 0; f < files; f++) {
    const dir = path.join(root, `d${f % 20}`)
    fs.mkdirSync(dir, { recursive: true })
    const lines = []
    for (let n = 0; n < 2000; n++) lines.push(`line ${n} of file ${f}: ${'lorem ipsum dolor sit amet '.repeat(3)}word${(f * 2000 + n) % 997}`)
    fs.writeFileSync(path.join(dir, `f${f}.txt`), lines.join('\n') + '\n')
  }
  return root
}

function startServer (root) {
  // The per-client rate limit is off: 200 clients from one address are one client to it, and this measures
  // the concurrency limiter (1,200 requests a minute was reached within the first seconds).
  const child = spawn(process.execPath, [CLI, 'serve', '--root', root, '--host', '127.0.0.1', '--port', '0', '--mode', 'stateless', '--rate-limit-per-minute', '0'], { stdio: ['ignore', 'pipe', 'pipe'] })
  return new Promise((resolve, reject) => {
    let output = ''
    const guard = setTimeout(() => reject(new Error(`no URL within 15 s:\n${output}`)), 15_000)
    const onData = (chunk) => {
      output += chunk.toString()
      const m = /http:\/\/127\.0\.0\.1:(\d+)\/mcp/.exec(output)
      if (m !== null && m[1] !== '0') {
        clearTimeout(guard)
        resolve({ url: m[0], child })
      }
    }
    child.stdout.on('data', onData)
    child.stderr.on('data', onData)
    child.once('exit', (code) => { clearTimeout(guard); reject(new Error(`server exited with ${code}:\n${output}`)) })
  })
}

let nextId = 1
async function call (url, name, args) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: nextId++, method: 'tools/call', params: { name, arguments: args } }),
    signal: AbortSignal.timeout(CALL_TIMEOUT_MS)
  })
  const text = await res.text()
  if (res.status !== 200) return { status: res.status, text }
  return { status: 200, message: JSON.parse(text) }
}

const ms = (x) => `${x.toFixed(1)} ms`

const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length === 0 ? NaN : s[Math.min(s.length - 1, Math.floor(p / 100 * s.length))]
}

async function timeCheap (url, until) {
  const times = []
  while (!until() && times.length < 20_000) {
    const started = performance.now()
    const r = await call(url, 'list_directory', { path: '.' })
    if (r.status !== 200 || r.message.result?.isError === true) throw new Error(`cheap call failed: ${JSON.stringify(r).slice(0, 300)}`)
    times.push(performance.now() - started)
  }
  return times
}

/** Peak resident set of a process so far (VmHWM), in MB; undefined where /proc is missing. */
function peakRssMb (pid) {
  try {
    return Number(/VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024
  } catch {
    return undefined
  }
}

/** Runs the storm; returns table rows. Options: clients (200), files (400), duration (s). */
export async function runLimitsBench ({ clients = 200, files = 400, duration = 10 }, log) {
  log(`   building a ${files}-file tree`)
  const root = makeTree(files)
  const { url, child } = await startServer(root)
  try {
    const idleUntil = performance.now() + Math.min(3000, duration * 300)
    const idle = await timeCheap(url, () => performance.now() > idleUntil)
    const rssBefore = peakRssMb(child.pid)
    const outcomes = { answered: 0, busy: 0, http503: 0, other: 0 }
    const stopAt = performance.now() + duration * 1000
    let sequence = 0
    log(`   ${clients} clients searching for ${duration} s`)
    const storm = Array.from({ length: clients }, async () => {
      while (performance.now() < stopAt) {
        // A distinct pattern each time: no search is served from the result cache.
        const i = sequence++
        let outcome = 'other'
        try {
          const r = await call(url, 'search_regex', { pattern: `word${i % 997}$|file ${i}:`, output_mode: 'count' })
          if (r.status === 503) outcome = 'http503'
          else if (r.status !== 200) outcome = 'other'
          else if (/^ERROR BUSY/.test(r.message.result?.content?.[0]?.text ?? '')) outcome = 'busy'
          else if (r.message.result?.isError !== true) outcome = 'answered'
        } catch {}
        outcomes[outcome]++
        // A refused client waits a little before retrying, as the hints of BUSY and 503 ask.
        if (outcome === 'busy' || outcome === 'http503') await new Promise(resolve => setTimeout(resolve, 250))
      }
    })
    const loaded = await timeCheap(url, () => performance.now() > stopAt)
    await Promise.all(storm)
    const rssAfter = peakRssMb(child.pid)
    const total = outcomes.answered + outcomes.busy + outcomes.http503 + outcomes.other
    const note = `${files} files × 2,000 lines; searches: ${outcomes.answered} answered (${(outcomes.answered / duration).toFixed(1)}/s), ` +
      `${outcomes.busy} BUSY, ${outcomes.http503} HTTP 503, ${outcomes.other} other of ${total}; ` +
      `server peak RSS ${rssBefore?.toFixed(0) ?? '?'} → ${rssAfter?.toFixed(0) ?? '?'} MB; ${os.cpus().length} cores`
    return [
      {
        name: `cheap call (\`list_directory\`) p99 during ${clients} concurrent \`search_regex\` (HTTP)`,
        measured: `p50 ${ms(pct(loaded, 50))}, p99 ${ms(pct(loaded, 99))} (n=${loaded.length})`,
        baseline: `idle p50 ${ms(pct(idle, 50))}, p99 ${ms(pct(idle, 99))} (n=${idle.length})`,
        ratio: pct(loaded, 99) / pct(idle, 99),
        goal: 'info: every call answered, no 503',
        pass: outcomes.other === 0 && outcomes.http503 === 0,
        note
      }
    ]
  } finally {
    child.kill('SIGTERM')
    fs.rmSync(root, { recursive: true, force: true })
  }
}
