import { formatReport, runChecks } from '../guide/check.js'
import { createTokenizer } from '../services/tokenizer.js'
import { commandRuntime, splitArgs } from './command-runtime.js'

/** `workspace-mcp check`: conventions, tools/list budget and documentation; exit 1 on any violation. */
export async function main (argv: string[]): Promise<void> {
  const { rest } = splitArgs(argv, [], [])
  // Boot lint off: check reports every violation as a line instead of failing on the first boot error.
  const runtime = await commandRuntime(rest, { lint: false })
  const { catalog, guide, tokenizer } = runtime.registry.services
  if (catalog === undefined || guide === undefined) throw new Error('the registry has no catalog or guide')
  const counter = tokenizer ?? createTokenizer()
  const report = await runChecks(catalog, guide, counter)
  await counter.close()
  process.stdout.write(formatReport(report) + '\n')
  if (report.violations.length > 0) process.exitCode = 1
}
