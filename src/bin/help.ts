import { ConfigSchema, configEnvName, configFlagName } from '../config.js'

const SERVER_KEYS: Record<string, string[]> = {
  serve: Object.keys(ConfigSchema.properties),
  stdio: ['root', 'fixtures', 'logLevel', 'callLogLevel', 'toolTimeoutMs', 'toolsPageSize', 'templatesDir', 'docsFile'],
  tools: ['root', 'fixtures', 'docsFile'],
  guide: ['root', 'fixtures', 'docsFile'],
  check: ['root', 'fixtures', 'docsFile']
}

const EXTRA: Record<string, string> = {
  tools: '  --json                      Print the manifest as JSON (default: a one-line-per-tool summary)\n',
  guide: '  --tool NAME                 Only this tool (repeatable)\n',
  check: ''
}

/** Help text for one command, generated from the config schema. */
export function commandHelp (command: string): string {
  const lines = [`Usage: workspace-mcp ${command} [options]`, '', 'Options (each also read from its environment variable):']
  for (const key of SERVER_KEYS[command] ?? []) {
    const schema = (ConfigSchema.properties as Record<string, { description?: string, default?: unknown }>)[key]
    const def = schema.default === undefined ? '' : ` (default ${JSON.stringify(schema.default)})`
    lines.push(`  ${configFlagName(key).padEnd(26)}  ${configEnvName(key)}`, `      ${schema.description ?? ''}${def}`)
  }
  return lines.join('\n') + '\n' + (EXTRA[command] ?? '') + '\nExit codes: 0 success, 1 failure, 2 bad usage or configuration.'
}
