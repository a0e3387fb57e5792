#!/usr/bin/env node
// `npm test [-- tap args]`: runs tap and prints a terse report — one line per test file, the failing
// assertions in full, tap's coverage table when coverage is short — ending with `N passed, N failed,
// N skipped`. The raw TAP goes to .tap/report/results.tap for later reading. Exits with tap's code.
// Named files (`npm test -- test/x.test.ts`) and `--changed` (tap's: the tests of what changed since the last
// run, `npm run test:changed`) run without coverage.
import { spawn } from 'node:child_process'
import { createWriteStream, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'

// tap's own project root is found from the working directory (npm runs scripts in the package root).
const root = process.cwd()
const tapBin = fileURLToPath(new URL('../node_modules/tap/dist/esm/run.mjs', import.meta.url))
const reportDir = path.join(root, '.tap', 'report')
mkdirSync(reportDir, { recursive: true })
const rawFile = path.join(reportDir, 'results.tap')
const raw = createWriteStream(rawFile)
const out = (line) => process.stdout.write(line + '\n')
// A reader that stops early (`npm test | head`) must not crash the run: tap's exit code still counts.
process.stdout.on('error', () => {})

// Every server the tests start keeps its code index in this folder, never in the user's own state folder.
const state = mkdtempSync(path.join(os.tmpdir(), 'wmcp-test-state-'))
process.on('exit', () => rmSync(state, { recursive: true, force: true }))
// Coverage is a gate on the whole suite: a run of some files (`npm test -- test/x.test.ts`) reaches only
// part of the code, so it runs without coverage (faster, and a file reaching no source is no failure) —
// unless the caller passes a coverage flag of their own.
const args = process.argv.slice(2)
const subset = args.some(arg => (!arg.startsWith('-') && existsSync(arg)) || arg === '--changed' || arg === '-n') && !args.some(arg => /^--(allow-incomplete-coverage|disable-coverage|no-allow-incomplete-coverage)\b/.test(arg))
const tapArgs = ['--reporter=tap', ...(subset ? ['--disable-coverage'] : []), ...args]
// The servers the tests start (in-process and spawned) start their threads on demand and shed no load for a lagging
// event loop, unless a test says otherwise: the warm-up (~0.5 s of CPU per server) is tested in runtime.test.ts and
// shedding in http/metrics.test.ts, and on a loaded machine a second-long lag would shed a test's own requests.
const serverDefaults = { WORKSPACE_MCP_LAZY_THREADS: 'true', WORKSPACE_MCP_MAX_EVENT_LOOP_DELAY_MS: '0' }
const child = spawn(process.execPath, [tapBin, ...tapArgs], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'], env: { ...serverDefaults, ...process.env, XDG_STATE_HOME: state } })
let file = []        // the indented TAP of the test file running now
let summary          // tap's final `# { total: … }`
let files = 0
let failedFiles = 0
let afterTap = false // coverage table and the like, printed after the last file

/** The failing assertions of one file's TAP, each with its YAML diagnostics. */
function failures (lines) {
  const shown = []
  for (let i = 0; i < lines.length; i++) {
    // A failed subtest's own line (it carries `# time=`) only repeats its failed assertions: skip it.
    if (!/^\s*not ok /.test(lines[i]) || / # time=[\d.]+ms$/.test(lines[i])) continue
    shown.push(lines[i])
    const indent = lines[i].search(/\S/)
    if (lines[i + 1]?.trim() !== '---') continue
    for (i++; i < lines.length; i++) {
      shown.push(lines[i])
      if (lines[i].trim() === '...' && lines[i].search(/\S/) === indent + 2) break
    }
  }
  return shown
}

createInterface({ input: child.stdout }).on('line', (line) => {
  raw.write(line + '\n')
  const top = /^(not )?ok \d+ - (\S+)(?: # (.*))?$/.exec(line)
  if (top !== null) {
    files++
    const time = /time=([\d.]+)ms/.exec(top[3] ?? '')
    const seconds = time === null ? '' : ` ${(Number(time[1]) / 1000).toFixed(1)} s`
    const skipped = /^SKIP/i.test(top[3] ?? '') ? ' (skipped)' : ''
    if (top[1] === undefined) out(`ok      ${top[2]}${seconds}${skipped}`)
    else {
      failedFiles++
      out(`FAILED  ${top[2]}${seconds}`)
      for (const shown of failures(file)) out(`  ${shown}`)
    }
    file = []
    return
  }
  const total = /^# (\{ total: .* \})$/.exec(line)
  if (total !== null) {
    summary = total[1]
    afterTap = true
    return
  }
  // tap prints its coverage table (when coverage is short) after the last file and before the summary.
  if (!afterTap && files > 0 && /^-{5,}\|/.test(line)) afterTap = true
  if (afterTap && !line.startsWith('#')) out(line)
  else if (/^\s/.test(line)) file.push(line)
  else if (/^(Bail out!|not ok)/.test(line)) out(line)
})

child.on('close', (code, signal) => {
  raw.end()
  const count = (key) => Number(new RegExp(`${key}: (\\d+)`).exec(summary ?? '')?.[1] ?? 0)
  let failed = count('fail')
  if (code !== 0 && failed === 0) failed = 1 // a failed coverage gate, a crash or a signal fails the run too
  out('')
  out(`${files} test files (${failedFiles} failed); full TAP in ${path.relative(root, rawFile)}`)
  if (subset) out('coverage off: a part of the suite ran (files named, or --changed), and the coverage gate is on the whole suite')
  if (code !== 0 && count('fail') === 0) out(`tap exited with ${signal ?? `code ${code}`} (coverage below 100% counts as a failure)`)
  out(`${count('pass')} passed, ${failed} failed, ${count('skip')} skipped`)
  process.exitCode = code ?? 1
})
