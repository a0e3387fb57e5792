import t, { type Test } from 'tap'
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { untracked } from '../helpers/spawn-stdio.js'

// scripts/test.mjs, the runner behind `npm test`: one line per test file, failing assertions in full,
// the raw TAP kept in a file, and a last line `N passed, N failed, N skipped`; exit code from tap.
// It runs on fixture tests in a project of their own, so its tap run never touches this run's .tap/.

const repo = fileURLToPath(new URL('../..', import.meta.url))
// A clean environment: this file itself runs under tap, whose variables would make the inner tap a child of ours.
const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^(TAP|_TAPJS|NODE_OPTIONS$|NODE_V8_COVERAGE$)/.test(key)))
// The fixture project shares our node_modules, so it takes our tap plugins (another set would make tap
// rebuild its runner there, under the outer run). Its test files are JavaScript: no loader to start in each.
/** scripts/test.mjs with `args`, outside tap's process tracking (its spawn hook would re-add what env leaves out). */
function runner (args: string[], options: { cwd: string, env: NodeJS.ProcessEnv, encoding: 'utf8', timeout: number }) {
  const { command, args: argv } = untracked(process.execPath, [path.join(repo, 'scripts/test.mjs'), ...args])
  return spawnSync(command, argv, options)
}
const tap = {
  'disable-coverage': true,
  plugin: JSON.parse(fs.readFileSync(path.join(repo, 'package.json'), 'utf8')).tap.plugin
}

type Files = { [name: string]: string | Buffer | Files }

/**
 * A fixture project outside the checkout (not t.testdir, under our .tap/): its tap run finds its own root there,
 * and never cleans or reports into this run's .tap/ while other test files use it.
 */
function fixtureProject (t: Test, files: Files): string {
  const project = fs.mkdtempSync(path.join(os.tmpdir(), 'wmcp-runner-'))
  t.teardown(() => fs.rmSync(project, { recursive: true, force: true }))
  const write = (dir: string, entries: Files): void => {
    for (const [name, body] of Object.entries(entries)) {
      if (typeof body === 'string' || Buffer.isBuffer(body)) fs.writeFileSync(path.join(dir, name), body)
      else { fs.mkdirSync(path.join(dir, name)); write(path.join(dir, name), body) }
    }
  }
  write(project, files)
  fs.symlinkSync(path.join(repo, 'node_modules'), path.join(project, 'node_modules'))
  return project
}

t.test('the runner\'s three endings: a failure in full, coverage short of 100% failing a green suite, a green run of named files', async (t) => {
  // Outside the checkout also because tap leaves files under a .tap/ folder out of coverage.
  const project = fixtureProject(t, {
    'package.json': JSON.stringify({ type: 'module', tap: { ...tap, 'disable-coverage': false } }),
    'half.js': 'export const half = (n) => n > 0 ? n / 2 : 0\n',
    test: {
      'pass.test.js': fs.readFileSync(path.join(repo, 'test/helpers/reporter/pass.js')),
      'half.test.js': "import t from 'tap'\nimport { half } from '../half.js'\nt.equal(half(4), 2)\n"
    },
    // Named only: no name the whole-suite run looks for.
    failing: { 'fail-case.js': fs.readFileSync(path.join(repo, 'test/helpers/reporter/fail.js')) }
  })

  // A named failing file: its line, the failing assertion with its diff, no passing one, the raw TAP kept.
  const failed = runner(['failing/fail-case.js'], { cwd: project, env, encoding: 'utf8', timeout: 60_000 })
  const failedLines = failed.stdout.trimEnd().split('\n')
  t.equal(failed.status, 1, 'tap\'s failing exit code')
  t.ok(failedLines.some(l => /^FAILED {2}failing\/fail-case\.js/.test(l)), 'the failing file')
  t.ok(failedLines.some(l => /not ok \d+ - this one does not/.test(l)), 'the failing assertion')
  t.ok(failedLines.some(l => /\+actual/.test(l)), 'with its diff')
  t.notOk(failedLines.some(l => /^\s*ok \d+ - this one holds/.test(l)), 'passing assertions are not printed')
  t.match(fs.readFileSync(path.join(project, '.tap/report/results.tap'), 'utf8'), /ok \d+ - this one holds/, 'the raw TAP is kept')
  t.equal(failedLines.at(-1), '1 passed, 1 failed, 0 skipped')

  // The whole suite, every assertion green, coverage short: the table is printed and the run fails.
  const whole = runner([], { cwd: project, env, encoding: 'utf8', timeout: 60_000 })
  const lines = whole.stdout.trimEnd().split('\n')
  t.equal(whole.status, 1, whole.stdout + whole.stderr)
  t.ok(lines.some(l => /^ok {6}test\/pass\.test\.js/.test(l)) && lines.some(l => /^ok {6}test\/half\.test\.js/.test(l)), 'one terse line per file')
  t.ok(lines.some(l => /^File\s+\| % Stmts \| % Branch/.test(l)), 'the table\'s header')
  t.ok(lines.some(l => /half\.js\s+\|\s+100 \|\s+66\.66 \|/.test(l)), 'the short file, with its branch figure')
  t.match(lines.at(-2), /coverage below 100% counts as a failure/)
  t.equal(lines.at(-1), '2 passed, 1 failed, 1 skipped')

  // Naming files runs part of the suite: without coverage, so without the gate (the README's one-file command).
  const named = runner(['test/half.test.js'], { cwd: project, env, encoding: 'utf8', timeout: 60_000 })
  const namedLines = named.stdout.trimEnd().split('\n')
  t.equal(named.status, 0, named.stdout + named.stderr)
  t.match(namedLines.at(-2), /^coverage off: a part of the suite ran \(files named, or --changed\)/)
  t.notOk(namedLines.some(l => /% Stmts/.test(l)), 'no coverage table')
  t.equal(namedLines.at(-1), '1 passed, 0 failed, 0 skipped', 'an all-green run exits 0 and says so')
})
