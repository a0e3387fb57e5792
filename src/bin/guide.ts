import { commandRuntime, splitArgs } from './command-runtime.js'
import type { CommandIo } from './run.js'

/** `workspace-mcp guide [--tool NAME…] [--category C] [--no-examples]`: the usage guide as Markdown. */
export async function main (argv: string[], io: CommandIo = process): Promise<void> {
  const { own, rest } = splitArgs(argv, ['no-examples'], ['tool', 'category'])
  const runtime = await commandRuntime(rest, io)
  const out = runtime.guide.render(runtime.registry.catalog, {
    tool_names: own.tool,
    category: own.category?.at(-1),
    include_examples: own['no-examples'] === undefined
  }, runtime.clock.now())
  await runtime.close()
  io.stdout.write(out.text)
  // Unknown names are warnings in the tool; on the command line they are a typo worth a non-zero exit.
  for (const warning of out.warnings) io.stderr.write(`workspace-mcp guide: ${warning}\n`)
  if (out.warnings.length > 0) io.exitCode = 1
}
