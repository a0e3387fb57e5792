import t, { type Test } from 'tap'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { DOCS_RULE, formatReport, runChecks } from '../../src/guide/check.js'
import { commandRuntime } from '../../src/bin/command-runtime.js'
import { parseOverlay } from '../../src/guide/overlay.js'

// `workspace-mcp check` in-process: what it counts with the conformance fixtures served beside the
// product, and how its verdict reads.

const ROOT = fileURLToPath(new URL('../..', import.meta.url))

/**
 * The check's report. With `logged`, what the command writes to its stderr (its warnings) is pushed there; without,
 * the command has this process's streams, as the bin gives it (a run that warns of nothing prints nothing).
 */
async function reportFor (t: Test, argv: string[], logged?: string[]) {
  const io = logged === undefined ? process : { stdout: process.stdout, stderr: { write: (text: string) => logged.push(text) } }
  const runtime = await commandRuntime('check', ['--root', ROOT, ...argv], io, { lint: false })
  t.teardown(async () => {
    runtime.services.search?.close()
    await runtime.tokenizer.close()
  })
  return runChecks(runtime.registry.catalog, runtime.guide, runtime.tokenizer)
}

t.test('the verdict counts violations in words: one violation, two violations', async (t) => {
  const report = await reportFor(t, [])
  const violation = { tool: 'read_files', rule: DOCS_RULE, message: 'is Documented' }

  const one = formatReport({ ...report, violations: [violation] })
  const two = formatReport({ ...report, violations: [violation, violation] })

  t.match(one, /\n\nread_files: rule 7 \(docs-complete\): is Documented\n\ncheck failed: 1 violation$/)
  t.match(two, /check failed: 2 violations$/)
  t.match(one, new RegExp(`^ {2}read_files\\s+Complete\\s+${report.toolTokens.read_files} tokens$`, 'm'))
})

/** The report for an overlay holding `text` (in a test dir tap removes), as text; and the overlay's path. */
async function reportWithOverlay (t: Test, text: string): Promise<{ docs: string, text: string, violations: number, logged: string[] }> {
  const docs = join(t.testdir({ 'tools.yaml': text }), 'tools.yaml')
  const logged: string[] = []
  const report = await reportFor(t, ['--docs-file', docs], logged)
  return { docs, text: formatReport(report), violations: report.violations.length, logged }
}

t.test('a tool without a docs/tools.yaml entry passes and is named', async (t) => {
  const shipped = parseOverlay(readFileSync(join(ROOT, 'docs', 'tools.yaml'), 'utf8')).tools
  const report = await reportWithOverlay(t, JSON.stringify({ tools: { ...shipped, read_files: undefined } }))

  t.equal(report.violations, 0, report.text)
  t.match(report.text, /^ {2}read_files\s+SchemaOnly/m)
  t.match(report.text, /check passed: \d+ tools, 6 conventions, no docs\/tools\.yaml entry for [\w, ]*\bread_files\b[\w, ]* \(optional/)
})

t.test('an overlay that cannot be parsed is a violation naming the file, why, and the flag to fix it', async (t) => {
  const report = await reportWithOverlay(t, 'tools: [unclosed\n')

  t.match(report.text, new RegExp(`^\\(overlay\\): rule 7 \\(docs-complete\\): ${report.docs.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is \\w+; fix it or point --docs-file at the overlay$`, 'm'))
  t.match(report.text, /^\(overlay\): rule 7 \(docs-complete\): .*tools\.yaml: Flow sequence in block collection .* at line 2, column 1:$/m, 'and why')
  t.match(report.text, /check failed: 2 violations$/m)
  t.match(report.logged.join(''), /"msg":"tool docs overlay is corrupt; using the registry text"/, 'and the command warns on its stderr')
})
