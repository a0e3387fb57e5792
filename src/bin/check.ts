import { formatReport, runChecks } from '../guide/check.js'
import { OWN_FLAGS } from './command-flags.js'
import { commandRuntime, splitArgs, type CommandIo } from './command-runtime.js'

/** `workspace-mcp check`: conventions, tools/list budget and documentation; exit 1 on any violation. */
export async function main (argv: string[], io: CommandIo = process): Promise<void> {
  const { rest } = splitArgs(argv, OWN_FLAGS.check)
  // Boot lint off: check reports every violation as a line instead of failing on the first boot error; and it
  // checks every tool's texts as written, whatever tools a deployment chooses.
  const runtime = await commandRuntime('check', rest, io, { lint: false, chooseTools: false })
  const report = await runChecks(runtime.registry.catalog, runtime.guide, runtime.tokenizer)
  await runtime.close()
  io.stdout.write(formatReport(report) + '\n')
  if (report.violations.length > 0) io.exitCode = 1
}
