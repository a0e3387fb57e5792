import { APP_ERR_CONFIG_INVALID } from '../base/errors.js'
import { ConfigSchema, configFlagName, parseConfigFlags } from '../base/config.js'
import { closestName } from '../services/edit-distance.js'

/** A command of the `workspace-mcp` bin. */
export type CommandName = 'serve' | 'stdio' | 'index' | 'tools' | 'guide' | 'check'

/** Config keys only the HTTP server reads: its listener, sessions, auth, limits, scale-out and drain. */
export const HTTP_ONLY_KEYS: ReadonlySet<string> = new Set([
  'host', 'port', 'mode', 'maxSessions', 'maxInflightRequests', 'sessionIdleMs', 'allowedOrigins', 'allowedHosts', 'bodyLimit',
  'publicUrl', 'authTokens', 'jwtIssuer', 'jwtJwksUrl', 'jwtPublicKeyFile', 'jwtAlgorithms', 'authScope', 'insecureNoAuth',
  'trustProxy', 'maxSessionsPerClient', 'rateLimitPerMinute', 'maxEventLoopDelayMs', 'metricsPath', 'redisUrl', 'sessionCheckMs',
  'requestTimeoutMs', 'headersTimeoutMs', 'bodyTimeoutMs', 'maxHeapUsedPercent', 'maxRssMb', 'drainMs'
])

const ALL_KEYS = Object.keys(ConfigSchema.properties)
// What decides which tools a runtime serves (the operator's choice, roots with or without git, ripgrep, the index,
// an embeddings provider) and what their docs say: tools, guide and check print about that set, so each reads these.
const TOOL_SET_KEYS = ['root', 'roots', 'tools', 'excludeTools', 'ripgrepPath', 'codeIndex', 'embeddingsUrl', 'embeddingsModel', 'docsFile', 'logFormat']

/** The config keys each command reads: its --help lists them, and a flag for any other key is bad usage. */
export const COMMAND_KEYS: Readonly<Record<CommandName, readonly string[]>> = {
  serve: ALL_KEYS,
  stdio: ALL_KEYS.filter(key => !HTTP_ONLY_KEYS.has(key)),
  index: ['root', 'roots', 'allowHardLinks', 'stateDir', 'indexMaxMb', 'indexThreads', 'logFormat', 'logLevel'],
  tools: TOOL_SET_KEYS,
  guide: TOOL_SET_KEYS,
  check: TOOL_SET_KEYS.filter(key => key !== 'tools' && key !== 'excludeTools')
}

/** A command's own flags, beside the config keys: `booleans` take no value, `values` take one. */
export interface OwnFlags { booleans: readonly string[], values: readonly string[] }

const NONE: OwnFlags = { booleans: [], values: [] }
/** Each command's own flags (its --help lists them after the config keys). */
export const OWN_FLAGS: Readonly<Record<CommandName, OwnFlags>> = {
  serve: NONE,
  stdio: NONE,
  index: { booleans: [], values: ['wait'] },
  tools: { booleans: ['json'], values: [] },
  guide: { booleans: ['no-examples'], values: ['tool', 'category'] },
  check: NONE
}

/** Runs `parse`; an unknown flag's error then names the command's flag closest to it (`--prot`: did you mean --port?). */
function withFix<T> (command: CommandName, parse: () => T): T {
  try {
    return parse()
  } catch (err) {
    const { unknownOption, message } = err as Error & { unknownOption?: string }
    const { booleans, values } = OWN_FLAGS[command]
    const close = unknownOption === undefined ? undefined : closestName(unknownOption, [...COMMAND_KEYS[command].map(key => configFlagName(key).slice(2)), ...booleans, ...values])
    if (close === undefined) throw err
    throw new APP_ERR_CONFIG_INVALID(`${message.replace(/^Invalid configuration: /, '')} (did you mean --${close}?)`)
  }
}

/**
 * A command's config flags: parseConfigFlags, then a flag the command would ignore (`tools --port 4000`) is
 * refused naming the commands that read it — environment variables stay shared, so only flags are held to it.
 */
export function commandFlags (command: CommandName, argv: string[]): Record<string, string | string[]> {
  const flags = withFix(command, () => parseConfigFlags(argv))
  const ignored = Object.keys(flags).filter(key => !COMMAND_KEYS[command].includes(key))
  if (ignored.length > 0) {
    const readers = (key: string) => (Object.keys(COMMAND_KEYS) as CommandName[]).filter(c => COMMAND_KEYS[c].includes(key)).join(', ')
    throw new APP_ERR_CONFIG_INVALID(ignored.map(key => `${configFlagName(key)} does nothing for \`workspace-mcp ${command}\` (read by: ${readers(key)})`).join('; ') +
      `; \`workspace-mcp ${command} --help\` lists the flags it reads`)
  }
  return flags
}
