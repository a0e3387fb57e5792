import t, { type Test } from 'tap'
import { spawn } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { AddressInfo } from 'node:net'
import pino from 'pino'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/base/config.js'
import { createRuntime } from '../../src/runtime.js'
import { conformanceFixtures } from '../fixtures/conformance/conformance.js'
import { untracked } from '../helpers/spawn-stdio.js'

// Runs the official suite (@modelcontextprotocol/conformance) against one HTTP server in this process, serving
// the suite's fixtures beside the product's tools: 0.1.16 (the `latest` tag, `--suite all`) and the prerelease 0.2.0-alpha.12
// with `--requirements 2025-11-25` and `--requirements 2026-07-28` (one server serves both eras). Every
// scenario must pass except those in baseline.json (scenario → reason; every entry must still fail), and
// of what a requirement set does not score, only extensions may fail: pending scenarios count too.
// A scenario fails when any of its checks is FAILURE or WARNING (the suite's own baseline rule).

const suite = (name: string): string => fileURLToPath(new URL(`../../node_modules/@modelcontextprotocol/${name}/dist/index.js`, import.meta.url))
const STABLE = suite('conformance')
const NEXT = suite('conformance-next')
// Node 20 has no fs.globSync, which the bundles import; the hook supplies one.
const HOOK = new URL('./node20-globsync.mjs', import.meta.url).href
const BASELINE = JSON.parse(readFileSync(new URL('./baseline.json', import.meta.url), 'utf8')) as Record<string, string>
const SUITE_TIMEOUT_MS = 90_000

interface Check { id: string, status: string, errorMessage?: string }

const work = mkdtempSync(join(tmpdir(), 'wmcp-conformance-'))

/** Runs a suite's CLI with the hook; killed by PID if it outlives the timeout. */
function runSuite (bundle: string, args: string[]): Promise<{ code: number | null, output: string }> {
  // Coverage of the suite's own bundle is of no use and slows it down: outside tap's process tracking.
  const { NODE_V8_COVERAGE: _coverage, ...env } = process.env
  const { command, args: argv } = untracked(process.execPath, ['--import', HOOK, bundle, ...args])
  const child = spawn(command, argv, { cwd: work, env, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  child.stdout.on('data', (chunk: Buffer) => { output += chunk.toString() })
  child.stderr.on('data', (chunk: Buffer) => { output += chunk.toString() })
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      if (child.pid !== undefined) process.kill(child.pid, 'SIGKILL')
      reject(new Error(`conformance ${args.join(' ')} did not finish within ${SUITE_TIMEOUT_MS} ms:\n${output.slice(-4000)}`))
    }, SUITE_TIMEOUT_MS)
    child.once('error', (err) => { clearTimeout(timer); reject(err) })
    child.once('close', (code) => { clearTimeout(timer); resolve({ code, output }) })
  })
}

/** `server-<scenario>-<ISO time with - for : and .>` → scenario. */
const scenarioOf = (dir: string): string => dir.replace(/^server-/, '').replace(/-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$/, '')

interface Outcome { scenarios: string[], passed: string[], checks: number, notScored: Map<string, string>, code: number | null }

/** One run: every scenario's checks, which passed, and what the requirement set leaves unscored (scenario → reason). */
async function conformanceRun (t: Test, url: string, label: string, bundle: string, args: string[]): Promise<Outcome> {
  const outDir = join(work, label)
  const run = await runSuite(bundle, ['server', '--url', url, ...args, '--output-dir', outDir])
  const scenarios = [...run.output.matchAll(/^=== Running scenario: (\S+) ===$/gm)].map(m => m[1])
  const announced = Number(/\((\d+) scenarios\)/.exec(run.output)?.[1] ?? 0)
  t.ok(announced > 0 && scenarios.length === announced, `${label}: every announced scenario ran (${scenarios.length} of ${announced})`, { tail: run.output.slice(-2000) })
  const results = new Map<string, Check[]>()
  for (const dir of readdirSync(outDir)) results.set(scenarioOf(dir), JSON.parse(readFileSync(join(outDir, dir, 'checks.json'), 'utf8')) as Check[])
  t.same([...results.keys()].sort(), [...scenarios].sort(), `${label}: every scenario saved its checks`)
  const notScored = new Map([...run.output.matchAll(/^\s+[✓✗] (\S+) \(([\w-]+)\)$/gm)].map(m => [m[1], m[2]]))
  const passed: string[] = []
  let checks = 0
  for (const scenario of scenarios) {
    const all = results.get(scenario) ?? []
    checks += all.length
    const bad = all.filter(c => c.status === 'FAILURE' || c.status === 'WARNING')
    if (bad.length === 0) passed.push(scenario)
    // An extension a requirement set leaves unscored (the tasks extension in 2026-07-28) is served here: it must pass too.
    if (!(scenario in BASELINE)) t.equal(bad.length, 0, `${label}: ${scenario} passes`, { failures: bad.map(c => `${c.status} ${c.id}: ${c.errorMessage ?? ''}`) })
  }
  return { scenarios, passed, checks, notScored, code: run.code }
}

/** The HTTP server with the fixtures, in this process on a port of its own; closed on teardown. */
async function fixtureServer (t: Test, root: string): Promise<{ url: string }> {
  const config = loadConfig({ root, host: '127.0.0.1', port: 0, logLevel: 'silent' }, {})
  const runtime = await createRuntime(config, pino({ level: 'silent' }), { extras: conformanceFixtures() })
  const app = await buildApp({ runtime, config })
  t.teardown(async () => { await app.close() })
  await app.listen({ host: '127.0.0.1', port: 0 })
  return { url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}/mcp` }
}

t.test('the official conformance suites pass, both eras, against one server with the suite\'s fixtures', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'wmcp-conformance-root-'))
  const server = await fixtureServer(t, root)

  const expected = join(work, 'expected-failures.yml')
  const baselined = Object.keys(BASELINE)
  writeFileSync(expected, baselined.length === 0 ? 'server: []\n' : `server:\n${baselined.map(s => `  - ${s}\n`).join('')}`)
  const stable = await conformanceRun(t, server.url, '0.1.16-all', STABLE, ['--suite', 'all', '--expected-failures', expected])
  t.ok(stable.scenarios.length >= 32, 'the 0.1 suite ran all its server scenarios')
  for (const name of baselined) {
    t.ok(stable.scenarios.includes(name), `baseline entry '${name}' names a scenario the suite ran`)
    t.notOk(stable.passed.includes(name), `${name} still fails as the baseline says (remove the entry if it passes now)`)
  }
  t.equal(stable.code, 0, 'the 0.1 suite agrees with the baseline (exit 0)')

  const legacy = await conformanceRun(t, server.url, '2025-11-25', NEXT, ['--requirements', '2025-11-25'])
  const modern = await conformanceRun(t, server.url, '2026-07-28', NEXT, ['--requirements', '2026-07-28'])
  // The 2026 set leaves the tasks extension (SEP-2663) unscored; it is served here, and every one of its scenarios ran.
  const extensions = [...modern.notScored].filter(([, reason]) => reason === 'extension').map(([name]) => name)
  t.ok(extensions.length >= 10 && extensions.every(name => name.startsWith('tasks-') && modern.passed.includes(name)), 'the tasks extension\'s scenarios pass', { extensions })
  for (const name of ['json-schema-2020-12', 'http-header-validation', 'http-custom-header-server-validation']) {
    t.ok(modern.passed.includes(name), `the pending ${name} passes too`)
  }
  t.equal(legacy.code, 0, 'the 2025-11-25 requirement run exits 0')
  t.equal(modern.code, 0, 'the 2026-07-28 requirement run exits 0')
  for (const [label, run] of [['0.1.16 --suite all', stable], ['--requirements 2025-11-25', legacy], ['--requirements 2026-07-28', modern]] as const) {
    t.comment(`conformance ${label}: ${run.scenarios.filter(s => run.passed.includes(s)).length}/${run.scenarios.length} scenarios, ${run.checks} checks`)
  }
  // Resumability (SEP-1699) records real checks, not "not applicable": the POST stream is primed, carries
  // a retry hint, closes mid-call, and the result arrives on the GET that resumes from the last event id.
  const polling = JSON.parse(readFileSync(join(work, '0.1.16-all', readdirSync(join(work, '0.1.16-all')).find(d => d.startsWith('server-server-sse-polling-'))!, 'checks.json'), 'utf8')) as Check[]
  for (const id of ['server-sse-priming-event', 'server-sse-retry-field', 'server-sse-disconnect-resume']) {
    t.ok(polling.some(c => c.id === id && c.status === 'SUCCESS'), `server-sse-polling: ${id} succeeds`, { checks: polling.map(c => `${c.status} ${c.id}`) })
  }
})
