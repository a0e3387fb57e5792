import { basename, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { Type, type Static, type TSchema } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import { APP_ERR_CONFIG_INVALID } from './errors.js'

/** The per-call log line's level unless configured: debug, off in production (the engine's default too). */
export const DEFAULT_CALL_LOG_LEVEL = 'debug'

/** The one configuration schema: every key is a CLI flag and a WORKSPACE_MCP_* variable. */
export const ConfigSchema = Type.Object({
  root: Type.String({ minLength: 1, description: 'Workspace root to serve (read-only), as `path` or `name=path`; give --root again for more roots. Default: the current directory.' }),
  roots: Type.Array(Type.String({ minLength: 1 }), { default: [], description: 'More roots after root, each `path` or `name=path` (comma-separated). With several roots every path starts with `name:` (default name: the folder\'s base name, made unique); a path without one is in the first root.' }),
  clientRoots: Type.Union([Type.Literal('narrow'), Type.Literal('ignore')], { default: 'narrow', description: 'Protocol 2025-11-25 roots: `narrow` asks a client that declares roots for them (roots/list) and serves its session only the served folders inside them (never more); client roots that meet no served root are ignored. `ignore` never asks.' }),
  tools: Type.Array(Type.String({ minLength: 1 }), { default: [], description: 'Serve only these tools (comma-separated names, e.g. `list_directory,search_regex,read_files`): tools/list, the usage guide, the instructions and every hint then name only them. Empty: every tool this configuration can serve. `workspace-mcp tools` lists the names.' }),
  excludeTools: Type.Array(Type.String({ minLength: 1 }), { default: [], description: 'Leave out these tools (comma-separated names), applied after --tools. A call to a left-out tool answers TOOL_EXCLUDED naming the served tools to use instead.' }),
  allowHardLinks: Type.Boolean({ default: false, description: 'Serve the content of regular files with more than one hard link (refused otherwise: another name may be outside the root).' }),
  allowBroadRoot: Type.Boolean({ default: false, description: 'Allow serving /, the home directory or a system folder such as /etc (refused otherwise).' }),
  host: Type.String({ minLength: 1, default: '127.0.0.1', description: 'HTTP bind address. A non-loopback address requires --allowed-hosts, and authentication unless --insecure-no-auth.' }),
  port: Type.Integer({ minimum: 0, maximum: 65535, default: 3000, description: 'HTTP port (0 picks a free one).' }),
  mode: Type.Union([Type.Literal('stateful'), Type.Literal('stateless')], { default: 'stateful', description: 'Streamable HTTP mode: sessions + SSE, or one request per POST.' }),
  logFormat: Type.Union(['auto', 'json', 'pretty'].map(f => Type.Literal(f)), { default: 'auto', description: 'Log lines as JSON, or pretty (pino-pretty, coloured); auto: pretty when the log stream is a terminal, JSON otherwise.' }),
  logLevel: Type.Union(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map(l => Type.Literal(l)), { default: 'info', description: 'pino log level (HTTP logs to stdout, stdio to stderr).' }),
  callLogLevel: Type.Union([Type.Literal('debug'), Type.Literal('info')], { default: DEFAULT_CALL_LOG_LEVEL, description: 'Level of the per-call `{ tool, durationMs, outcome }` log line.' }),
  toolTimeoutMs: Type.Integer({ minimum: 100, maximum: 600000, default: 30000, description: 'Per-call deadline; the call\'s AbortSignal fires and a TIMEOUT tool error is returned.' }),
  listCacheTtlMs: Type.Integer({ minimum: 0, maximum: 86400000, default: 300000, description: 'Protocol 2026-07-28: how long clients may cache tools/list, prompts/list, resources/list, resources/templates/list and server/discover (cacheScope public).' }),
  readCacheTtlMs: Type.Integer({ minimum: 0, maximum: 86400000, default: 0, description: 'Protocol 2026-07-28: how long clients may cache a resources/read result (cacheScope private).' }),
  toolsPageSize: Type.Integer({ minimum: 1, maximum: 1000, default: 100, description: 'Tools per `tools/list` page (cursor pagination beyond it).' }),
  maxSessions: Type.Integer({ minimum: 1, maximum: 100000, default: 1000, description: 'Stateful HTTP session cap; beyond it initialize gets 503 + Retry-After.' }),
  maxInflightRequests: Type.Integer({ minimum: 1, maximum: 100000, default: 256, description: 'Most HTTP POSTs answered at once, each counted once its body has arrived (a POST still sending its body holds no slot); beyond it a POST gets 503 + Retry-After.' }),
  sessionIdleMs: Type.Integer({ minimum: 1000, maximum: 604800000, default: 1800000, description: 'Idle time after which a stateful HTTP session expires.' }),
  allowedOrigins: Type.Array(Type.String(), { default: [], description: 'Extra allowed Origin values (comma-separated). Loopback origins are always allowed on a loopback bind.' }),
  allowedHosts: Type.Array(Type.String(), { default: [], description: 'Extra allowed Host names (comma-separated); required for a non-loopback bind.' }),
  bodyLimit: Type.Integer({ minimum: 1024, maximum: 104857600, default: 4194304, description: 'Largest accepted HTTP request body, in bytes.' }),
  ripgrepPath: Type.String({ default: '', description: 'The ripgrep binary search_regex runs. Default: the one @vscode/ripgrep ships, else `rg` on an absolute PATH entry outside the served roots.' }),
  maxSearches: Type.Integer({ minimum: 1, maximum: 64, default: 2, description: 'ripgrep processes running at once, process-wide (each uses every core); more wait in the queue.' }),
  maxWalks: Type.Integer({ minimum: 1, maximum: 256, default: 4, description: 'Directory walks (list_directory, find_files) running at once, process-wide.' }),
  maxLargeReads: Type.Integer({ minimum: 1, maximum: 256, default: 4, description: 'Reads of files over 1 MB running at once, process-wide.' }),
  maxQueuedWork: Type.Integer({ minimum: 0, maximum: 100000, default: 64, description: 'Calls waiting for each of those limits; one more gets a BUSY tool error.' }),
  tokenizerWorkers: Type.Integer({ minimum: 1, maximum: 16, default: 2, description: 'Worker threads that count tokens exactly (started on demand; each holds the BPE ranks).' }),
  publicUrl: Type.String({ default: '', description: 'Canonical URL of the MCP endpoint as clients reach it (e.g. https://mcp.example.com/mcp): the audience JWTs must carry and the protected-resource metadata\'s resource. Required with --jwt-issuer.' }),
  authTokens: Type.Array(Type.String(), { default: [], description: 'Static bearer tokens, each as name:sha256 (comma-separated); `printf %s "$TOKEN" | sha256sum` gives the digest. The name is the client\'s identity in logs and limits.' }),
  jwtIssuer: Type.String({ default: '', description: 'Issuer (iss) of accepted JWT access tokens; set with --jwt-jwks-url or --jwt-public-key-file.' }),
  jwtJwksUrl: Type.String({ default: '', description: 'JWKS URL the issuer publishes its signing keys at.' }),
  jwtPublicKeyFile: Type.String({ default: '', description: 'PEM (SPKI) public key file, for an issuer without a JWKS URL; needs --jwt-algorithms.' }),
  jwtAlgorithms: Type.Array(Type.String(), { default: [], description: 'Accepted JWT signature algorithms (comma-separated). Default RS256, PS256, ES256, EdDSA.' }),
  authScope: Type.String({ minLength: 1, default: 'workspace:read', description: 'Scope every request\'s token must carry.' }),
  insecureNoAuth: Type.Boolean({ default: false, description: 'Serve a non-loopback address without authentication (refused otherwise).' }),
  trustProxy: Type.String({ default: '', description: 'Proxies whose X-Forwarded-For is believed (comma-separated addresses or CIDRs, or a hop count): the client address then keys per-client limits.' }),
  maxSessionsPerClient: Type.Integer({ minimum: 1, maximum: 100000, default: 100, description: 'Stateful sessions one client (token, or address without auth) may hold; beyond it initialize gets 429 + Retry-After.' }),
  rateLimitPerMinute: Type.Integer({ minimum: 0, maximum: 10000000, default: 1200, description: 'Requests to /mcp per client per minute (initialize included); beyond it 429 + Retry-After. 0 turns the limit off.' }),
  maxHeapUsedPercent: Type.Integer({ minimum: 0, maximum: 100, default: 85, description: 'JavaScript heap in use, as a percentage of V8\'s heap limit (--max-old-space-size), beyond which /mcp answers 503 + Retry-After until memory is freed (0 turns the check off).' }),
  maxRssMb: Type.Integer({ minimum: 0, maximum: 10000000, default: 0, description: 'Resident memory of the process in MB beyond which /mcp answers 503 + Retry-After until memory is freed, e.g. 90 % of a container\'s memory limit (0 turns the check off).' }),
  maxEventLoopDelayMs: Type.Integer({ minimum: 0, maximum: 600000, default: 1000, description: 'Event-loop delay beyond which /mcp answers 503 + Retry-After until the process catches up (0 turns the check off).' }),
  metricsPath: Type.String({ default: '/metrics', description: 'Where Prometheus metrics are served (exempt from the Host check, like the probes; keep it off the public network). Empty turns them off.' }),
  redisUrl: Type.String({ default: '', description: 'Replicas behind a load balancer: keep MCP task records in this Redis (redis://host:port), and in stateful mode session records and resumable SSE events too, so any replica serves any task and session.' }),
  sessionCheckMs: Type.Integer({ minimum: 0, maximum: 3600000, default: 5000, description: 'With --redis-url: how often a replica re-reads a session it serves from Redis (a DELETE or log level set through another replica shows up within this time).' }),
  requestTimeoutMs: Type.Integer({ minimum: 1000, maximum: 600000, default: 30000, description: 'Longest time a client may take to send a whole request (headers and body); slower connections are closed.' }),
  headersTimeoutMs: Type.Integer({ minimum: 1000, maximum: 600000, default: 10000, description: 'Longest time a client may take to send a request\'s headers (at most --request-timeout-ms); slower connections are closed (408).' }),
  bodyTimeoutMs: Type.Integer({ minimum: 100, maximum: 600000, default: 10000, description: 'Longest time a POST\'s body may take to arrive after its headers; a later one is answered 408 and its connection closed. Raise it with --body-limit for big bodies on slow links.' }),
  drainMs: Type.Integer({ minimum: 0, maximum: 600000, default: 10000, description: 'On SIGTERM/SIGINT, how long in-flight calls may finish; then running searches stop and answer with what they found, other calls answer SHUTTING_DOWN, and the answers are written (about 2 s more) before the process exits. Keep the orchestrator\'s grace period (terminationGracePeriodSeconds, stop_grace_period) at least --drain-ms + 5 s.' }),
  lazyThreads: Type.Boolean({ default: false, description: 'Start the token-count thread and the outline parser only when a call needs them. By default they start once the first request is answered (the parser\'s runtime and its C and TypeScript grammars warmed on generated samples), so the first budgeted answer and the first get_symbols do not wait on them: about half a second of CPU once, and their memory (~145 MiB) from the start.' }),
  codeIndex: Type.Union([Type.Literal('on'), Type.Literal('watch'), Type.Literal('shared'), Type.Literal('off')], { default: 'on', description: 'The symbol and code-search index behind find_symbol and search_code: built in the background at start (a worker thread), kept in one SQLite file under --state-dir, refreshed by a size+mtime scan when a call finds it older than 30 s (one writer at a time: a server that finds another writing reads what it writes). `watch`: also watches the folders it indexes and scans again half a second after a change. `shared`: reads the index `workspace-mcp index` publishes in --state-dir, never builds one (replicas). `off`: those tools are not offered.' }),
  stateDir: Type.String({ default: '', description: 'Folder for the code index (one SQLite file per set of roots, never inside a root unless this names one). Default: $XDG_STATE_HOME/workspace-mcp, else ~/.local/state/workspace-mcp; when it cannot be written, a temporary file that is removed at exit.' }),
  indexMaxMb: Type.Integer({ minimum: 0, maximum: 10000000, default: 0, description: 'Largest size of the index file, in MB; past it the index stops as on a full disk (the other tools keep serving). 0: no limit beyond the disk.' }),
  indexThreads: Type.Integer({ minimum: 0, maximum: 16, default: 0, description: 'Parser threads building the code index (each holds a tree-sitter heap); 0: one per core, at most 2.' }),
  stateMaxAgeDays: Type.Integer({ minimum: 1, maximum: 36500, default: 30, description: 'At start, other roots\' index files in --state-dir not scanned for this many days are removed (logged).' }),
  stateMaxMb: Type.Integer({ minimum: 0, maximum: 10000000, default: 4096, description: 'At start, while --state-dir holds more than this many MB of indexes, other roots\' are removed, least recently used first (never the served roots\' own; 0: no limit).' }),
  embeddingsUrl: Type.String({ default: '', description: 'An embeddings endpoint: turns on search_semantic (natural-language search over the code index, fused with BM25). OpenAI-compatible (https://api.openai.com/v1/embeddings; Ollama, LM Studio, llama.cpp and vLLM serve one at …/v1/embeddings; a base URL ending in /v1 is completed) or Ollama\'s own http://127.0.0.1:11434/api/embed. The API key, if any, is read from WORKSPACE_MCP_EMBEDDINGS_API_KEY only. Code is sent to this URL.' }),
  embeddingsModel: Type.String({ default: '', description: 'The embedding model (required with --embeddings-url), e.g. text-embedding-3-small or nomic-embed-text.' }),
  embeddingsDimensions: Type.Integer({ minimum: 0, maximum: 8192, default: 0, description: 'Vector length asked of the model (`dimensions`, for models that can shorten theirs); 0: the model\'s own. Vectors are kept per (model, dimensions).' }),
  embeddingsBatchSize: Type.Integer({ minimum: 1, maximum: 512, default: 64, description: 'Chunks sent per embeddings request.' }),
  embeddingsTimeoutMs: Type.Integer({ minimum: 1000, maximum: 600000, default: 60000, description: 'Longest wait for one embeddings answer (a failed request is retried 3 times with backoff).' }),
  embeddingsMaxChunks: Type.Integer({ minimum: 1, maximum: 10000000, default: 250000, description: 'Most chunks given vectors (searched in memory: chunks × dimensions × 4 bytes); the rest are found by their words only.' }),
  templatesDir: Type.String({ default: '.workspace-mcp/templates', description: 'Prompt template folder, relative to the root (used if present).' }),
  docsFile: Type.String({ default: '', description: 'Tool description overlay (YAML). Default: the docs/tools.yaml shipped with the server.' })
}, { additionalProperties: false })

/** The validated, frozen configuration. */
export type Config = Readonly<Static<typeof ConfigSchema>>

const ENV_PREFIX = 'WORKSPACE_MCP_'
const kebab = (key: string): string => key.replace(/[A-Z]/g, c => `-${c.toLowerCase()}`)
const envName = (key: string): string => ENV_PREFIX + key.replace(/[A-Z]/g, c => `_${c}`).toUpperCase()

/** Environment variable name for a config key (`toolTimeoutMs` → `WORKSPACE_MCP_TOOL_TIMEOUT_MS`). */
export const configEnvName = envName
/** CLI flag for a config key (`toolTimeoutMs` → `--tool-timeout-ms`). */
export const configFlagName = (key: string): string => `--${kebab(key)}`
/** How a user-facing text names a setting: its flag and its variable (`--tool-timeout-ms / WORKSPACE_MCP_TOOL_TIMEOUT_MS`), never the config key. */
export const configLabel = (key: string): string => `${configFlagName(key)} / ${envName(key)}`

function isArraySchema (schema: TSchema): boolean {
  return (schema as { type?: string }).type === 'array'
}

function isBooleanSchema (schema: TSchema): boolean {
  return (schema as { type?: string }).type === 'boolean'
}

/** The values a union of literals allows (`mode`, `logLevel`…), or undefined for any other schema. */
export function allowedValues (schema: TSchema): string[] | undefined {
  const members = (schema as { anyOf?: Array<{ const?: unknown }> }).anyOf
  if (members === undefined || !members.every(m => typeof m.const === 'string')) return undefined
  return members.map(m => m.const as string)
}

/** TypeBox's message, except for a union of literals, where "Expected union value" names the choices. */
function describeError (schema: TSchema, message: string): string {
  const values = allowedValues(schema)
  return values === undefined ? message : `expected one of ${values.map(v => JSON.stringify(v)).join(', ')}`
}

/**
 * Parses argv flags (after the command) into raw config values; an unknown flag is an error whose
 * `unknownOption` names it (its name without dashes). Boolean keys are bare flags.
 */
export function parseConfigFlags (argv: string[]): Record<string, string | string[]> {
  const options: Record<string, { type: 'string' | 'boolean', multiple?: boolean }> = {}
  for (const [key, schema] of Object.entries(ConfigSchema.properties)) options[kebab(key)] = { type: isBooleanSchema(schema) ? 'boolean' : 'string' }
  options.root.multiple = true
  try {
    const { values } = parseArgs({ args: argv, options, strict: true, allowPositionals: false })
    const raw: Record<string, string | string[]> = {}
    for (const key of Object.keys(ConfigSchema.properties)) {
      const v = values[kebab(key)]
      if (typeof v === 'string') raw[key] = v
      else if (v === true) raw[key] = 'true'
    }
    // --root once is the root; each further --root is one more root, before any given by --roots.
    const [root, ...more] = values.root as string[] | undefined ?? []
    if (root !== undefined) raw.root = root
    if (more.length > 0) raw.roots = [...more, ...splitList(raw.roots as string | undefined ?? '')]
    return raw
  } catch (err) {
    const { code, message } = err as Error & { code?: string }
    const unknownOption = code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' ? /'-*([^'=]*)/.exec(message)?.[1] : undefined
    throw Object.assign(new APP_ERR_CONFIG_INVALID(message), unknownOption === undefined ? {} : { unknownOption })
  }
}

/** Builds the frozen Config from flags (win) and environment; throws APP_ERR_CONFIG_INVALID naming each bad key. */
export function loadConfig (flags: Record<string, unknown> = {}, env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): Config {
  const raw: Record<string, unknown> = {}
  for (const [key, schema] of Object.entries(ConfigSchema.properties)) {
    const value = flags[key] ?? env[envName(key)]
    if (value === undefined || value === '') continue
    raw[key] = isArraySchema(schema) && typeof value === 'string' ? splitList(value) : value
  }
  // Only a list of roots given (WORKSPACE_MCP_ROOTS): its first is the root.
  if (raw.root === undefined && Array.isArray(raw.roots) && raw.roots.length > 0) [raw.root, ...raw.roots] = raw.roots as string[]
  raw.root ??= cwd
  const value = Value.Convert(ConfigSchema, Value.Default(ConfigSchema, raw))
  const errors = [...Value.Errors(ConfigSchema, value)]
  if (errors.length > 0) {
    const detail = errors.map(e => {
      // Every config error is about a key (the root is always an object we built): `?? e.path` is a guard.
      /* c8 ignore next */
      const key = e.path.split('/')[1] ?? e.path
      return `${configLabel(key)}: ${describeError(e.schema, e.message)}, received ${JSON.stringify(e.value)}`
    })
    throw new APP_ERR_CONFIG_INVALID([...new Set(detail)].join('; '))
  }
  const config = value as Static<typeof ConfigSchema>
  const roots = nameRoots([config.root, ...config.roots].map(spec => parseRootSpec(spec, cwd)))
  config.root = roots[0].path
  config.roots = roots.map(r => `${r.name}=${r.path}`)
  return Object.freeze(config)
}

const splitList = (value: string): string[] => value.split(',').map(s => s.trim()).filter(Boolean)

/** A configured root: the name its paths start with (`name:`) when several are served, and its absolute path. */
export interface RootSpec {
  name: string
  path: string
}

const NAMED_ROOT = /^([A-Za-z0-9][A-Za-z0-9._-]{0,63})=(.+)$/s

/** `name=path` or a bare path (a folder whose name holds `=` is given as `./a=b`). */
function parseRootSpec (spec: string, cwd: string): { name?: string, path: string } {
  const named = NAMED_ROOT.exec(spec)
  return named === null ? { path: resolve(cwd, spec) } : { name: named[1], path: resolve(cwd, named[2]) }
}

/** Names every root: given names must be unique; the rest take their folder's base name, made unique with -2, -3 … */
function nameRoots (specs: Array<{ name?: string, path: string }>): RootSpec[] {
  const label = `${configFlagName('root')} / ${envName('roots')}`
  const given = new Set<string>()
  for (const spec of specs) {
    if (spec.name === undefined) continue
    if (given.has(spec.name)) throw new APP_ERR_CONFIG_INVALID(`${label}: the name "${spec.name}" is given to two roots; names must be unique`)
    given.add(spec.name)
  }
  const paths = new Set<string>()
  const taken = new Set(given)
  return specs.map(spec => {
    if (paths.has(spec.path)) throw new APP_ERR_CONFIG_INVALID(`${label}: ${spec.path} is given twice`)
    paths.add(spec.path)
    if (spec.name !== undefined) return { name: spec.name, path: spec.path }
    const base = basename(spec.path).replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^[^A-Za-z0-9]+/, '').slice(0, 60) || 'root'
    let name = base
    for (let n = 2; taken.has(name); n++) name = `${base}-${n}`
    taken.add(name)
    return { name, path: spec.path }
  })
}

/** The roots of a loaded config, in order (the first is where a path without `name:` points). */
export function configuredRoots (config: Pick<Config, 'root'> & Partial<Pick<Config, 'roots'>>): RootSpec[] {
  // loadConfig lists every root as name=path; a config built by hand may give only root.
  const listed = config.roots ?? []
  if (listed.length === 0) return nameRoots([{ path: config.root }])
  return listed.map(entry => {
    const cut = entry.indexOf('=')
    return { name: entry.slice(0, cut), path: entry.slice(cut + 1) }
  })
}
