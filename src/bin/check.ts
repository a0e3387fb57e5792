import { formatReport, runChecks } from '../guide/check.js'
import { commandRuntime, splitArgs } from './command-runtime.js'

/** `workspace-mcp check`: conventions, tools/list budget and documentation; exit 1 on any violation. */
export async function main (argv: string[]): Promise<void> {
  const { rest } = splitArgs(argv, [], [])
  // Boot lint off: check reports every violation as a line instead of failing on the first boot error.
  const runtime = await commandRuntime(rest, { lint: false })
  const report = await runChecks(runtime.registry.catalog, runtime.guide, runtime.tokenizer)
  await runtime.tokenizer.close()
  process.stdout.write(formatReport(report) + '\n')
  if (report.violations.length > 0) process.exitCode = 1
}
