import { OWN_FLAGS } from './command-flags.js'
import { commandRuntime, splitArgs, type CommandIo } from './command-runtime.js'
import type { ServiceName } from '../services/index.js'

/** What a service a tool needs is, in the words of the settings and installs that provide it. */
const NEEDS: Partial<Record<ServiceName, string>> = {
  semantic: 'an embeddings provider (--embeddings-url and --embeddings-model)',
  codeIndex: 'the code index (--code-index on; SQLite and tree-sitter)',
  git: 'a root that is a git work tree, and git',
  search: 'ripgrep (--ripgrep-path)',
  symbols: 'tree-sitter and its grammars'
}

/** A missing service in words; every service a product tool can lack has its words above. */
// A service added without words shows its key rather than "undefined".
/* c8 ignore next */
const needs = (service: ServiceName): string => NEEDS[service] ?? service

/** `workspace-mcp tools [--json]`: the tools array as tools/list serves it, byte for byte, or one line per tool. */
export async function main (argv: string[], io: CommandIo = process): Promise<void> {
  const { own, rest } = splitArgs(argv, OWN_FLAGS.tools)
  const runtime = await commandRuntime('tools', rest, io)
  await runtime.close()
  const { catalog } = runtime.registry
  if (own.json !== undefined) {
    io.stdout.write(catalog.manifestJson() + '\n')
    return
  }
  const entries = catalog.entries()
  const width = Math.max(0, ...entries.map(e => e.name.length))
  const lines = entries.map(e => `${e.name.padEnd(width)}  ${e.category.padEnd(10)}  ${e.title}`)
  const hidden = Object.entries(runtime.registry.unavailable).map(([name, missing]) => `${name} (not listed: needs ${missing.map(needs).join(' and ')})`)
  const left = runtime.registry.excluded.map(name => `${name} (not listed: left out by --tools / --exclude-tools)`)
  io.stdout.write([...lines, ...hidden, ...left].join('\n') + '\n')
}
