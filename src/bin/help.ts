import type { TSchema } from '@sinclair/typebox'
import { ConfigSchema, allowedValues, configEnvName, configFlagName } from '../base/config.js'
import { TOOL_TOKEN_ALLOWANCE } from '../guide/conventions.js'
import { TOOL_CATEGORIES } from '../tool-api/define-tool.js'
import { COMMAND_KEYS, type CommandName } from './command-flags.js'

/** How every config key is declared (test/config.test.ts holds each key to it): described, bounded on both sides or not at all. */
type ConfigKeySchema = TSchema & { description: string, default?: unknown } & ({ minimum: number, maximum: number } | { minimum?: undefined })

const EXTRA: Partial<Record<CommandName, string>> = {
  index: '  --wait SECONDS              How long to wait for another build holding the index (default 600)\n' +
    '\nBuilds the code index of the roots into --state-dir (a staging copy, refreshed by a size+mtime scan) and\n' +
    'publishes it in one rename: servers started with --code-index shared and the same roots and --state-dir\n' +
    'pick it up within a second. One build at a time runs (a lease beside the file, across hosts).\n',
  tools: '  --json                      Print the tools array, the very bytes of tools/list\'s `tools` (default: one line per tool)\n',
  guide: '  --tool NAME                 Only this tool (repeatable)\n' +
    `  --category NAME             Only one category: ${TOOL_CATEGORIES.join(', ')}\n` +
    '  --no-examples               Leave out the worked examples\n',
  check: '\nChecks the six tool conventions (one batch field; first sentence; get_* names its partner;\n' +
    `parameter descriptions with examples; each tool's tools/list entry within ${TOOL_TOKEN_ALLOWANCE} tokens;\n` +
    'snake_case verb-first names, titles, annotations), validates every docs/tools.yaml example against\n' +
    'its tool\'s input schema, and reports each tool\'s documentation state: SchemaOnly (no entry; the\n' +
    'guide shows the definition), Documented or Complete; an entry, once there, must be Complete.\n' +
    'Prints one line per violation: tool: rule N (name): what to change.\n'
}

const EXIT: Partial<Record<CommandName, string>> = {
  index: 'Exit codes: 0 published, 1 the build failed (the published index is unchanged), 2 bad usage or configuration, 75 another build held the index past --wait.',
  tools: 'Exit codes: 0 printed, 1 runtime error, 2 bad usage or configuration.',
  guide: 'Exit codes: 0 printed, 1 some --tool names are unknown (the rest is printed) or runtime error, 2 bad usage or configuration.',
  check: 'Exit codes: 0 every check passed, 1 violations found (or runtime error), 2 bad usage or configuration.'
}

/** Help text for one command, generated from the config schema. */
export function commandHelp (command: CommandName): string {
  const lines = [`Usage: workspace-mcp ${command} [options]`, '', 'Options (each also read from its environment variable):']
  for (const key of COMMAND_KEYS[command]) {
    const schema = (ConfigSchema.properties as Record<string, ConfigKeySchema>)[key]
    const facts = [
      ...(allowedValues(schema) === undefined ? [] : [`one of ${allowedValues(schema)?.join(', ')}`]),
      ...(schema.minimum === undefined ? [] : [`${schema.minimum}–${schema.maximum}`]),
      ...(schema.default === undefined ? [] : [`default ${JSON.stringify(schema.default)}`])
    ]
    const suffix = facts.length === 0 ? '' : ` (${facts.join('; ')})`
    lines.push(`  ${configFlagName(key).padEnd(26)}  ${configEnvName(key)}`, `      ${schema.description}${suffix}`)
  }
  return lines.join('\n') + '\n' + (EXTRA[command] ?? '') + '\n' + (EXIT[command] ?? 'Exit codes: 0 success, 1 failure, 2 bad usage or configuration.')
}
