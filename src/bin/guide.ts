import { APP_ERR_CONFIG_INVALID } from '../base/errors.js'
import { TOOL_CATEGORIES } from '../tool-api/define-tool.js'
import { OWN_FLAGS } from './command-flags.js'
import { commandRuntime, splitArgs, type CommandIo } from './command-runtime.js'

/** `workspace-mcp guide [--tool NAME…] [--category C] [--no-examples]`: the usage guide as Markdown. */
export async function main (argv: string[], io: CommandIo = process): Promise<void> {
  const { own, rest } = splitArgs(argv, OWN_FLAGS.guide)
  const category = own.category?.at(-1)
  if (category !== undefined && !(TOOL_CATEGORIES as readonly string[]).includes(category)) {
    throw new APP_ERR_CONFIG_INVALID(`--category: "${category.slice(0, 40)}" is not a category (one of ${TOOL_CATEGORIES.join(', ')})`)
  }
  const runtime = await commandRuntime('guide', rest, io)
  const out = runtime.guide.render(runtime.registry.catalog, {
    tool_names: own.tool,
    category,
    include_examples: own['no-examples'] === undefined
  }, runtime.clock.now())
  await runtime.close()
  io.stdout.write(out.text)
  // Unknown names are warnings in the tool; on the command line they are a typo worth a non-zero exit.
  for (const warning of out.warnings) io.stderr.write(`workspace-mcp guide: ${warning}\n`)
  if (out.warnings.length > 0) io.exitCode = 1
}
