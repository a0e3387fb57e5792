import { commandRuntime, splitArgs } from './command-runtime.js'
import type { CommandIo } from './run.js'

/** `workspace-mcp tools [--json]`: the tools/list manifest exactly as served, or one line per tool. */
export async function main (argv: string[], io: CommandIo = process): Promise<void> {
  const { own, rest } = splitArgs(argv, ['json'], [])
  const runtime = await commandRuntime(rest, io)
  await runtime.close()
  const { catalog } = runtime.registry
  if (own.json !== undefined) {
    io.stdout.write(catalog.manifestJson() + '\n')
    return
  }
  const entries = catalog.entries()
  const width = Math.max(0, ...entries.map(e => e.name.length))
  const lines = entries.map(e => `${e.name.padEnd(width)}  ${e.category.padEnd(10)}  ${e.title}`)
  const hidden = Object.entries(runtime.registry.unavailable).map(([name, missing]) => `${name} (not listed: needs ${missing.join(', ')})`)
  io.stdout.write([...lines, ...hidden].join('\n') + '\n')
}
