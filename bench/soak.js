#!/usr/bin/env node
// `npm run soak`: the built server over stateful HTTP with auth on, under mixed traffic for a bounded
// time — sessions opened and closed (some abandoned to the idle reaper), every tool, aborted
// connections, cancelled calls, dropped GET streams, wrong tokens and broken JSON — then an idle
// phase that opens many sessions at once. Reports the RSS slope after warm-up, the post-GC heap slope,
// heap per idle session, the error rate beyond the injected faults, and event-loop delay p99.
// Usage: node bench/soak.js [--minutes 10] [--clients 12] [--idle-sessions 1000] [--out F | --no-write] [--samples F.json]
import { spawn } from 'node:child_process'
import { createHash, randomBytes } from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { SoakClient, Unexpected } from './lib/soak-client.js'
import { soakReport, slopePerMinute } from './lib/soak-report.js'

const { values } = parseArgs({
  options: {
    minutes: { type: 'string', default: '10' },
    clients: { type: 'string', default: '12' },
    'idle-sessions': { type: 'string', default: '1000' },
    out: { type: 'string', default: fileURLToPath(new URL('results/soak.md', import.meta.url)) },
    'no-write': { type: 'boolean', default: false },
    samples: { type: 'string' }
  }
})
const minutes = Number(values.minutes)
const clients = Number.parseInt(values.clients, 10)
const idleSessions = Number.parseInt(values['idle-sessions'], 10)
if (!(minutes > 0 && minutes <= 24 * 60) || !(clients >= 1 && clients <= 200) || !(idleSessions >= 10 && idleSessions <= 4000)) {
  console.error('--minutes must be in (0, 1440], --clients in [1, 200], --idle-sessions in [10, 4000]')
  process.exit(2)
}
const CLI = fileURLToPath(new URL('../dist/bin/cli.js', import.meta.url))
const PROBE = fileURLToPath(new URL('lib/soak-probe.cjs', import.meta.url))
const log = (line) => process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${line}\n`)
const sleep = (ms) => new Promise(resolve => setTimeout(resolve, ms))
const pick = (xs) => xs[Math.floor(Math.random() * xs.length)]

/** A small source tree: 12 packages × 20 TypeScript files, docs, and one 3 MB log (a "large read"). */
function makeWorkspace () {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'wmcp-soak-')))
  for (let p = 0; p < 12; p++) {
    const dir = path.join(root, 'packages', `pkg${p}`, 'src')
    fs.mkdirSync(dir, { recursive: true })
    for (let f = 0; f < 20; f++) {
      const lines = [`// package ${p}, module ${f}`]
      for (let n = 0; n < 150; n++) lines.push(`export function handler${p}_${f}_${n} (input: string): number { return input.length + ${n} } // token${(p * 31 + f * 7 + n) % 101}`)
      fs.writeFileSync(path.join(dir, `module${f}.ts`), lines.join('\n') + '\n')
    }
  }
  fs.mkdirSync(path.join(root, 'docs'))
  for (let d = 0; d < 10; d++) fs.writeFileSync(path.join(root, 'docs', `guide${d}.md`), `# Guide ${d}\n\n${'Some prose about handlers and tokens.\n'.repeat(200)}`)
  fs.writeFileSync(path.join(root, 'server.log'), 'GET /api/items 200 12ms user=42 trace=abcdef\n'.repeat(70_000))
  fs.writeFileSync(path.join(root, 'README.md'), '# Soak workspace\n')
  return root
}

function startServer (root, tokens) {
  const auth = tokens.map(({ name, token }) => `${name}:${createHash('sha256').update(token).digest('hex')}`).join(',')
  const child = spawn(process.execPath, ['--expose-gc', '--require', PROBE, CLI, 'serve', '--root', root, '--host', '127.0.0.1', '--port', '0',
    '--mode', 'stateful', '--auth-tokens', auth, '--max-sessions', String(idleSessions + 1000), '--max-sessions-per-client', String(idleSessions + 200),
    '--rate-limit-per-minute', '1000000', '--session-idle-ms', '60000', '--log-level', 'info'], { stdio: ['ignore', 'pipe', 'pipe', 'ipc'] })
  let output = ''
  return new Promise((resolve, reject) => {
    const guard = setTimeout(() => reject(new Error(`no URL within 15 s:\n${output}`)), 15_000)
    const onData = (chunk) => {
      if (output.length < 1_000_000) output += chunk.toString()
      const m = /http:\/\/127\.0\.0\.1:(\d+)\/mcp/.exec(output)
      if (m !== null && m[1] !== '0') {
        clearTimeout(guard)
        resolve({ url: m[0], child, output: () => output })
      }
    }
    child.stdout.on('data', onData)
    child.stderr.on('data', onData)
    child.once('exit', (code) => { clearTimeout(guard); reject(new Error(`server exited with ${code}:\n${output}`)) })
  })
}

let sampleId = 0
/** Memory and loop delay from inside the server (bench/lib/soak-probe.cjs). */
function sample (child, { gc = false, reset = true } = {}) {
  const id = ++sampleId
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the probe did not answer in 10 s')), 10_000)
    const onMessage = (message) => {
      if (message?.id !== id) return
      clearTimeout(timer)
      child.off('message', onMessage)
      resolve(message)
    }
    child.on('message', onMessage)
    child.send({ type: 'sample', id, gc, reset })
  })
}

const ARGS = {
  list: () => ({ path: pick(['.', 'packages', 'docs', `packages/pkg${Math.floor(Math.random() * 12)}/src`]), depth: pick([1, 2]) }),
  find: () => ({ patterns: [pick(['**/*.ts', '*.md', `**/module${Math.floor(Math.random() * 20)}.ts`, 'docs/**'])] }),
  read: () => ({ files: [{ path: `packages/pkg${Math.floor(Math.random() * 12)}/src/module${Math.floor(Math.random() * 20)}.ts` }], max_lines_per_file: pick([20, 80, 200]) }),
  large: () => ({ files: [{ path: 'server.log' }], max_response_tokens: 2000 }),
  search: () => ({ pattern: `token${Math.floor(Math.random() * 101)}\\b`, output_mode: pick(['content', 'files', 'count']), page_size: pick([5, 20]) }),
  info: () => ({ paths: ['README.md', 'docs', `packages/pkg${Math.floor(Math.random() * 12)}`] })
}

const call = (name, args, options) => (c, session) => c.request(session, 'tools/call', { name, arguments: args() }, options)

/** What one step of a session does, with its weight: what agents (and bad networks) do. */
const ACTIONS = [
  [14, 'list_directory', call('list_directory', ARGS.list)],
  [12, 'find_files', call('find_files', ARGS.find)],
  [16, 'read_files', call('read_files', ARGS.read)],
  [4, 'read_files (3 MB)', call('read_files', ARGS.large)],
  [14, 'search_regex', call('search_regex', ARGS.search)],
  [6, 'get_file_info', call('get_file_info', ARGS.info)],
  [4, 'get_tool_usage_guide', call('get_tool_usage_guide', () => ({}))],
  [5, 'tools|prompts|resources/list', (c, session) => c.request(session, pick(['tools/list', 'prompts/list', 'resources/list']), {})],
  // A tool error the model is meant to act on: expected, not a failure.
  [4, 'tool error (expected)', call('read_files', () => ({ files: [{ path: 'no/such/file.ts' }] }), { toolError: true })],
  [8, 'aborted connection', (c, session) => c.abort(session, { name: 'search_regex', arguments: ARGS.search() }, Math.floor(Math.random() * 15))],
  [7, 'notifications/cancelled', (c, session) => c.cancel(session, { name: 'search_regex', arguments: ARGS.search() }, Math.floor(Math.random() * 10))],
  [3, 'GET stream dropped', (c, session) => c.stream(session, 20 + Math.floor(Math.random() * 80))],
  [3, 'injected fault (401/400)', (c, session) => c.fault(session, pick(['bad-token', 'malformed']))]
]
const TOTAL_WEIGHT = ACTIONS.reduce((sum, [weight]) => sum + weight, 0)
function pickAction () {
  let r = Math.random() * TOTAL_WEIGHT
  for (const action of ACTIONS) if ((r -= action[0]) < 0) return action
  return ACTIONS.at(-1)
}

/** One client: sessions one after another, each a random walk through ACTIONS. */
async function client (url, token, stopAt, stats) {
  const c = new SoakClient(url, token)
  const count = (kind) => { stats.ops[kind] = (stats.ops[kind] ?? 0) + 1 }
  while (Date.now() < stopAt) {
    try {
      const session = await c.open()
      count('initialize')
      const steps = 3 + Math.floor(Math.random() * 18)
      for (let i = 0; i < steps && Date.now() < stopAt; i++) {
        const [, kind, run] = pickAction()
        await run(c, session)
        count(kind)
        await sleep(Math.floor(Math.random() * 10))
      }
      // Most sessions end with DELETE; the rest are abandoned for the idle reaper (60 s here).
      if (Math.random() < 0.85) { await c.close(session); count('DELETE') } else count('abandoned')
    } catch (error) {
      stats.unexpected++
      if (stats.examples.length < 8) stats.examples.push(error instanceof Unexpected ? error.message : `${error.name}: ${error.message}`)
      if (!(error instanceof Unexpected)) await sleep(100)
    }
  }
  stats.streamRetries += c.streamRetries
}

/** Opens `n` sessions and leaves them idle; returns their ids. */
async function openIdle (url, token, n) {
  const c = new SoakClient(url, token)
  const ids = []
  for (let i = 0; i < n; i += 20) {
    ids.push(...await Promise.all(Array.from({ length: Math.min(20, n - i) }, () => c.open())))
  }
  return { c, ids }
}

async function main () {
  const tokens = Array.from({ length: 5 }, (_, i) => ({ name: i < 4 ? `agent${i}` : 'idle', token: randomBytes(24).toString('hex') }))
  const root = makeWorkspace()
  const { url, child, output } = await startServer(root, tokens)
  // Whatever happens to the soak, its server and files go with it.
  process.once('exit', () => {
    if (child.exitCode === null) child.kill('SIGKILL')
    fs.rmSync(root, { recursive: true, force: true })
  })
  const durationMs = minutes * 60_000
  const warmupMs = Math.min(120_000, durationMs * 0.2)
  const intervalMs = Math.max(2000, Math.min(10_000, durationMs / 60))
  log(`soak: ${minutes} min, ${clients} clients over 4 tokens, sample every ${intervalMs / 1000} s, warm-up ${Math.round(warmupMs / 1000)} s; ${url}`)
  const stats = { ops: {}, unexpected: 0, examples: [], streamRetries: 0 }
  const samples = []
  const started = Date.now()
  const stopAt = started + durationMs
  await sample(child, { reset: true })
  const traffic = Array.from({ length: clients }, (_, i) => client(url, tokens[i % 4].token, stopAt, stats))
  while (Date.now() < stopAt) {
    await sleep(Math.min(intervalMs, Math.max(0, stopAt - Date.now())))
    const s = await sample(child, { gc: true })
    samples.push({ t: (Date.now() - started) / 60_000, ...s })
    const done = Object.values(stats.ops).reduce((a, b) => a + b, 0)
    if (samples.length % 6 === 0) log(`  ${samples.at(-1).t.toFixed(1)} min: ${done} operations, RSS ${(s.rss / 2 ** 20).toFixed(1)} MB, heap ${(s.heapUsed / 2 ** 20).toFixed(1)} MB, loop p99 ${s.loopP99Ms.toFixed(1)} ms, ${stats.unexpected} unexpected`)
  }
  await Promise.all(traffic)

  log(`idle phase: ${idleSessions} sessions opened and left idle`)
  // Abandoned sessions expire after 60 s idle; wait for the reaper so they do not count against the idle phase.
  await sleep(65_000)
  const before = await sample(child, { gc: true })
  const { c, ids } = await openIdle(url, tokens[4].token, idleSessions)
  await sleep(1000)
  const held = await sample(child, { gc: true })
  for (let i = 0; i < ids.length; i += 50) await Promise.all(ids.slice(i, i + 50).map(id => c.close(id)))
  const released = await sample(child, { gc: true })

  child.disconnect()
  child.kill('SIGTERM')
  const exitCode = await new Promise(resolve => child.once('exit', resolve))

  const after = samples.filter(s => s.t * 60_000 >= warmupMs)
  const operations = Object.values(stats.ops).reduce((a, b) => a + b, 0)
  const report = soakReport({
    minutes,
    clients,
    warmupMinutes: warmupMs / 60_000,
    samples,
    ops: stats.ops,
    operations,
    unexpected: stats.unexpected,
    examples: stats.examples,
    streamRetries: stats.streamRetries,
    rssSlope: slopePerMinute(after.map(s => [s.t, s.rss])),
    heapSlope: slopePerMinute(after.map(s => [s.t, s.heapUsed])),
    heapTotalSlope: slopePerMinute(after.map(s => [s.t, s.heapTotal])),
    idle: { n: idleSessions, heapPerSession: (held.heapUsed - before.heapUsed) / idleSessions, rssPerSession: (held.rss - before.rss) / idleSessions, heapBack: released.heapUsed - before.heapUsed },
    exitCode,
    environment: `${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, Node ${process.version}, ${new Date().toISOString().slice(0, 16)} UTC`
  })
  process.stdout.write(report.markdown + '\n')
  if (!values['no-write']) fs.writeFileSync(values.out, report.markdown + '\n')
  if (values.samples !== undefined) fs.writeFileSync(values.samples, JSON.stringify(samples, null, 1) + '\n')
  if (exitCode !== 0) log(`server output (exit ${exitCode}):\n${output().slice(-2000)}`)
  process.exitCode = report.failed ? 1 : 0
}

await main()
