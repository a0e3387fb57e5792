import t, { type Test } from 'tap'
import { fileURLToPath } from 'node:url'
import { DOCS_RULE, formatReport, runChecks } from '../../src/guide/check.js'
import { commandRuntime } from '../../src/bin/command-runtime.js'

// `workspace-mcp check` in-process: what it counts with the conformance fixtures served beside the
// product, and how its verdict reads.

const ROOT = fileURLToPath(new URL('../..', import.meta.url))

async function reportFor (t: Test, argv: string[]) {
  const runtime = await commandRuntime(['--root', ROOT, ...argv], { lint: false })
  t.teardown(async () => {
    runtime.services.search?.close()
    await runtime.tokenizer.close()
  })
  return runChecks(runtime.registry.catalog, runtime.guide, runtime.tokenizer)
}

t.test('with --fixtures conformance, the budget and the states are the product\'s alone', async (t) => {
  const product = await reportFor(t, [])
  const withFixtures = await reportFor(t, ['--fixtures', 'conformance'])

  t.same(Object.keys(withFixtures.states), Object.keys(product.states), 'no fixture tool is reported')
  t.notOk('test_simple_text' in withFixtures.toolTokens)
  t.equal(withFixtures.tokens, product.tokens, 'the fixtures\' schemas are not counted')
  t.equal(withFixtures.budget, product.budget)
  t.same(withFixtures.violations, [])
})

t.test('the verdict counts violations in words: one violation, two violations', async (t) => {
  const report = await reportFor(t, [])
  const violation = { tool: 'read_files', rule: DOCS_RULE, message: 'is Documented' }

  const one = formatReport({ ...report, violations: [violation] })
  const two = formatReport({ ...report, violations: [violation, violation] })

  t.match(one, /\n\nread_files: rule 7 \(docs-complete\): is Documented\n\ncheck failed: 1 violation$/)
  t.match(two, /check failed: 2 violations$/)
  t.match(one, new RegExp(`^ {2}read_files\\s+Complete\\s+${report.toolTokens.read_files} tokens$`, 'm'))
})
