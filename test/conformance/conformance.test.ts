import t from 'tap'
import { spawn } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { spawnHttp } from '../helpers/spawn-http.js'
import { COVERED_CLI } from '../helpers/spawn-stdio.js'

// Runs the official suite (@modelcontextprotocol/conformance, `server --suite all`) against the built
// HTTP bin started with `--fixtures conformance`. Every scenario must pass except those in
// baseline.json (scenario → reason), and every baseline entry must still fail (no stale entries).
// A scenario fails when any of its checks is FAILURE or WARNING (the suite's own baseline rule).

const SUITE = fileURLToPath(new URL('../../node_modules/@modelcontextprotocol/conformance/dist/index.js', import.meta.url))
// Node 20 has no fs.globSync, which the bundle imports; the hook supplies one.
const HOOK = new URL('./node20-globsync.mjs', import.meta.url).href
const BASELINE = JSON.parse(readFileSync(new URL('./baseline.json', import.meta.url), 'utf8')) as Record<string, string>
const SUITE_TIMEOUT_MS = 90_000

interface Check { id: string, status: string, errorMessage?: string }

const work = mkdtempSync(join(tmpdir(), 'wmcp-conformance-'))

/** Runs the suite's CLI with the hook; killed by PID if it outlives the timeout. */
function runSuite (args: string[]): Promise<{ code: number | null, output: string }> {
  // Coverage of the suite's own bundle is of no use and slows it down.
  const { NODE_V8_COVERAGE: _coverage, ...env } = process.env
  const child = spawn(process.execPath, ['--import', HOOK, SUITE, ...args], { cwd: work, env, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  child.stdout.on('data', (chunk: Buffer) => { output += chunk.toString() })
  child.stderr.on('data', (chunk: Buffer) => { output += chunk.toString() })
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      if (child.pid !== undefined) process.kill(child.pid, 'SIGKILL')
      reject(new Error(`conformance ${args[0]} did not finish within ${SUITE_TIMEOUT_MS} ms:\n${output.slice(-4000)}`))
    }, SUITE_TIMEOUT_MS)
    child.once('error', (err) => { clearTimeout(timer); reject(err) })
    child.once('close', (code) => { clearTimeout(timer); resolve({ code, output }) })
  })
}

/** `server-<scenario>-<ISO time with - for : and .>` → scenario. */
const scenarioOf = (dir: string): string => dir.replace(/^server-/, '').replace(/-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$/, '')

t.test('the official conformance suite passes against --fixtures conformance, except the baseline', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'wmcp-conformance-root-'))
  // tsc's output, for coverage: the suite is the only client of some fixtures.
  const server = await spawnHttp(t, ['--fixtures', 'conformance', '--root', root], {}, COVERED_CLI)

  const outDir = join(work, 'results')
  const expected = join(work, 'expected-failures.yml')
  writeFileSync(expected, `server:\n${Object.keys(BASELINE).map(s => `  - ${s}\n`).join('')}`)
  const run = await runSuite(['server', '--url', server.url, '--suite', 'all', '--output-dir', outDir, '--expected-failures', expected])
  const announced = Number(/Running all suite \((\d+) scenarios\)/.exec(run.output)?.[1] ?? 0)
  const scenarios = [...run.output.matchAll(/^=== Running scenario: (\S+) ===$/gm)].map(m => m[1])
  t.ok(announced >= 32 && scenarios.length === announced, `the suite ran all its server scenarios (${scenarios.length} of ${announced})`, { tail: run.output.slice(-2000) })
  for (const name of Object.keys(BASELINE)) t.ok(scenarios.includes(name), `baseline entry '${name}' names a scenario the suite ran`)

  const results = new Map<string, Check[]>()
  for (const dir of readdirSync(outDir)) {
    results.set(scenarioOf(dir), JSON.parse(readFileSync(join(outDir, dir, 'checks.json'), 'utf8')) as Check[])
  }
  t.same([...results.keys()].sort(), [...scenarios].sort(), 'every listed scenario ran and saved its checks')

  let passed = 0
  for (const scenario of scenarios) {
    const bad = (results.get(scenario) ?? []).filter(c => c.status === 'FAILURE' || c.status === 'WARNING')
    const failing = bad.length > 0 || !results.has(scenario)
    if (!failing) passed++
    if (scenario in BASELINE) {
      t.ok(failing, `${scenario} still fails as the baseline says (remove the entry if it passes now)`)
    } else {
      t.notOk(failing, `${scenario} passes`, { failures: bad.map(c => `${c.status} ${c.id}: ${c.errorMessage ?? ''}`) })
    }
  }
  // Resumability (SEP-1699) records real checks, not "not applicable": the POST stream is primed, carries
  // a retry hint, closes mid-call, and the result arrives on the GET that resumes from the last event id.
  const polling = results.get('server-sse-polling') ?? []
  for (const id of ['server-sse-priming-event', 'server-sse-retry-field', 'server-sse-disconnect-resume']) {
    t.ok(polling.some(c => c.id === id && c.status === 'SUCCESS'), `server-sse-polling: ${id} succeeds`, { checks: polling.map(c => `${c.status} ${c.id}`) })
  }
  t.equal(run.code, 0, 'the suite itself agrees with the baseline (exit 0)', { tail: run.output.slice(-2000) })
  t.comment(`conformance: ${passed} of ${scenarios.length} scenarios pass; baseline: ${Object.keys(BASELINE).join(', ') || 'none'}`)
})
