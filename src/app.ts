import { statSync } from 'node:fs'
import Fastify, { LogController, type FastifyInstance } from 'fastify'
import rateLimit from '@fastify/rate-limit'
import type { Config } from './base/config.js'
import type { Logger } from './base/logger.js'
import { APP_ERR_RATE_LIMITED } from './base/errors.js'
import { authOptionsOf, checkExposure, memoryLimitsOf, trustProxyOf } from './http-options.js'
import { createRuntime, type Runtime, type RuntimeOverrides } from './runtime.js'
import type { ActiveCall } from './mcp/server.js'
import rpcErrors, { frameworkErrors } from './http/rpc-errors.js'
import originGuard, { isLoopbackHost } from './http/origin-guard.js'
import auth, { resourceMetadata } from './http/auth.js'
import health from './http/health.js'
import loadShedding from './http/load-shedding.js'
import mcpHttp, { principalOf } from './http/mcp-http.js'
import metrics from './http/metrics.js'
import requestTarget, { toOriginForm } from './http/request-target.js'
import type { RedisStores } from './http/redis-stores.js'
import { problemText } from './services/code-index/index.js'

/** What buildApp composes. */
export interface AppDeps {
  /** The engine and its services (createRuntime). */
  runtime: Runtime
  /** HTTP settings; defaults to the runtime's config. */
  config?: Config
  /** The stores replicas share, when config.redisUrl names one (assembleHttp connects them): the runtime's engine keeps its task records there; the app closes them. */
  stores?: RedisStores
}

/**
 * Connects the stores replicas share when config.redisUrl names a Redis (undefined otherwise): built before the
 * runtime, whose engine is given their task store, and handed to buildApp for the sessions and their events.
 * Loaded only when asked for: a single process needs no Redis client at all.
 */
async function sharedStores (config: Pick<Config, 'redisUrl' | 'sessionIdleMs'>, log: Logger): Promise<RedisStores | undefined> {
  if (config.redisUrl === '') return undefined
  return await (await import('./http/redis-stores.js')).createRedisStores({ url: config.redisUrl, eventTtlMs: config.sessionIdleMs, log })
}

/**
 * The HTTP server as the serve command runs it: the exposure check first (a refusal leaves nothing running), then
 * the stores replicas share, a runtime whose engine keeps its task records there, and the app that owns both.
 */
export async function assembleHttp (config: Config, log: Logger, overrides: RuntimeOverrides = {}): Promise<{ app: App, runtime: Runtime }> {
  checkExposure(config, authOptionsOf(config), isLoopbackHost(config.host))
  const stores = await sharedStores(config, log)
  const runtime = await createRuntime(config, log, { ...overrides, taskStore: stores?.tasks })
  return { app: await buildApp({ runtime, config, stores }), runtime }
}

/** The HTTP server's Fastify instance type. */
export type App = FastifyInstance

const MCP_PATH = '/mcp'

/** Why the server cannot do its work now: the root is gone or no longer a folder, or there is no ripgrep. */
function unusable (runtime: Runtime): string | undefined {
  const { workspace, search } = runtime.registry.services
  // A server without a workspace (tests, fixtures) has neither to lose.
  if (workspace === undefined) return undefined
  try {
    if (!statSync(workspace.root).isDirectory()) return 'the workspace root is no longer a folder'
  } catch (err) {
    return `the workspace root cannot be reached (${(err as NodeJS.ErrnoException).code})`
  }
  if (search === undefined) return 'ripgrep is not available: search_regex is not served'
  return undefined
}

/** What does not work while the rest does: the code index, when its store cannot be written, and every part that reported a degradation. */
function degraded (runtime: Runtime): string[] {
  const problem = runtime.registry.services.codeIndex?.status().problem
  const reported = runtime.degradations.current().map(d => `${d.component}: ${d.reason}`)
  return problem === undefined ? reported : [`code index unavailable: ${problemText(problem)}`, ...reported]
}

/** Node's headers timeout: never past the request timeout (Node refuses a longer one). */
const headersTimeout = (config: Config): number => Math.min(config.headersTimeoutMs, config.requestTimeoutMs)

/** Builds the Fastify app with every plugin registered, not listening (tests inject into it). */
export async function buildApp (deps: AppDeps): Promise<App> {
  const { runtime, config = runtime.config } = deps
  // The engine's task store is fixed when the runtime is built: a Redis named only here would leave tasks unshared.
  if (config.redisUrl !== '' && deps.stores === undefined) throw new Error('buildApp: config.redisUrl is set but no stores were given: assembleHttp connects them and builds the runtime with their task store')
  const authOptions = authOptionsOf(config)
  checkExposure(config, authOptions, isLoopbackHost(config.host))
  const app = Fastify({
    loggerInstance: runtime.log,
    // JSON bodies are parsed by the engine's parser (http/json-body), which refuses prototype-poisoning keys.
    bodyLimit: config.bodyLimit,
    // A hop count is accepted at run time (proxy-addr), though Fastify's types list only the other forms.
    trustProxy: trustProxyOf(config) as boolean | string | string[],
    // A client that stalls its headers or body, or never sends anything, is cut off: Node's defaults
    // (no request timeout, 60 s for headers checked every 30 s) let idle sockets pile up for minutes. Headers come
    // in one packet from any real client; a POST's body has its own, shorter deadline (mcp-http's bodyTimeoutMs).
    requestTimeout: config.requestTimeoutMs,
    http: { headersTimeout: headersTimeout(config), connectionsCheckingInterval: Math.max(250, Math.min(5000, Math.floor(headersTimeout(config) / 4))) },
    // The engine logs every tool call ({ tool, durationMs, outcome }); two more lines per request would halve throughput.
    logController: new LogController({ disableRequestLogging: true }),
    // No per-request pino child (about 1 µs each): the few request-scoped lines carry reqId themselves.
    childLoggerFactory: (logger) => logger,
    // Absolute-form targets (RFC 9112 §3.2.2) are routed as origin-form, judged by the authority they name.
    rewriteUrl: toOriginForm,
    frameworkErrors,
    // Draining is answered by mcp-http with a JSON-RPC-shaped 503, not Fastify's own body.
    return503OnClosing: false
  }) as unknown as App
  // JSON only: a text/plain body would reach the route as a string.
  app.removeContentTypeParser('text/plain')
  await app.register(rpcErrors)
  await app.register(requestTarget)
  const metricsPath = config.metricsPath === '' ? undefined : config.metricsPath
  // Every route checks Host and Origin but those marked anyHost (probes, metrics): decided by the route, not its path.
  await app.register(originGuard, { host: config.host, allowedOrigins: config.allowedOrigins, allowedHosts: config.allowedHosts })
  if (authOptions !== undefined) await app.register(resourceMetadata, authOptions)
  await app.register(health, { isDraining: () => app.mcpDraining, unusable: () => unusable(runtime), degraded: () => degraded(runtime) })
  // Stateless replicas share task records (2026 clients poll tasks/get on any of them); stateful ones sessions too.
  const shared = deps.stores
  if (shared !== undefined) app.addHook('onClose', async () => { await shared.close() })
  // The app owns the runtime it serves: closing one (a drain, a test) ends the other's threads and index too.
  app.addHook('onClose', async () => { await runtime.close() })
  await app.register(mcpHttp, {
    server: runtime.server,
    mode: config.mode,
    path: MCP_PATH,
    // Auth, the per-client limit and load shedding attach to the endpoint's own context: whatever spelling
    // the router accepts for /mcp, they run (and they never touch the probes).
    guard: async (endpoint) => {
      if (authOptions !== undefined) await endpoint.register(auth, { ...authOptions, degradations: runtime.degradations })
      await endpoint.register(loadShedding, { maxEventLoopDelayMs: config.maxEventLoopDelayMs, ...memoryLimitsOf(config), degradations: runtime.degradations })
      if (config.rateLimitPerMinute > 0) {
        await endpoint.register(rateLimit, {
          max: config.rateLimitPerMinute,
          timeWindow: 60_000,
          // After auth: a client is its token's principal, or its address (the forwarded one behind trusted proxies).
          keyGenerator: (request) => principalOf(request).id,
          errorResponseBuilder: (_request, context) => Object.assign(new APP_ERR_RATE_LIMITED(context.after), { statusCode: 429 }),
          onExceeded: () => { if (metricsPath !== undefined) app.countRateLimited() }
        })
      }
    },
    maxSessions: config.maxSessions,
    maxSessionsPerClient: config.maxSessionsPerClient,
    sessionIdleMs: config.sessionIdleMs,
    maxInflightRequests: config.maxInflightRequests,
    bodyTimeoutMs: config.bodyTimeoutMs,
    // Sessions and their events are a stateful server's only.
    events: config.mode === 'stateful' ? shared?.events : undefined,
    sessions: config.mode === 'stateful' ? shared?.sessions : undefined,
    sessionCheckMs: config.sessionCheckMs,
    degradations: runtime.degradations,
    clock: runtime.registry.services.clock
  })
  if (metricsPath !== undefined) {
    await app.register(metrics, { server: runtime.server, limiter: runtime.registry.services.limiter, codeIndex: runtime.registry.services.codeIndex, degradations: runtime.degradations, path: metricsPath, sessions: () => app.mcpStats() })
  }
  return app
}

/** How long calls still running at the drain deadline get to answer once their searches stop, ms. */
export const WIND_DOWN_GRACE_MS = 1000
/** How long their answers then get to reach the clients before connections close, ms. */
const ANSWER_WRITE_MS = 1000

/** How a drain ended: whether it finished in time, the calls stopped early, the requests left unanswered, and the exit code that says so. */
export interface DrainOutcome {
  drained: boolean
  stopped: ActiveCall[]
  unanswered: number
  /** 0, or 1 when a request was still open at the end (a client stalled mid-body). */
  exitCode: number
}

/**
 * Drains and closes the app for a shutdown, losing no answer: new requests get 503 while calls in flight get
 * `drainMs` to finish; at that deadline the rest are wound down — a running search stops and answers with what it
 * found (partial), any other call answers SHUTTING_DOWN — and their answers are written before connections close.
 */
export async function drainApp (app: App, runtime: Runtime, drainMs: number): Promise<DrainOutcome> {
  const drained = await app.mcpDrain(drainMs)
  const stopped = drained ? [] : runtime.server.activeCalls()
  let unanswered = 0
  if (!drained) {
    app.log.warn({ drainMs, stopped }, `drain ran out after ${drainMs} ms: ${stopped.length} call(s) answered early (partial, or SHUTTING_DOWN): ${stopped.map(c => `${c.tool} (${c.ms} ms)`).join(', ')}`)
    await runtime.windDown(WIND_DOWN_GRACE_MS)
    if (!await app.mcpDrain(ANSWER_WRITE_MS)) {
      const { inflight, receiving } = app.mcpStats()
      unanswered = inflight + receiving
      app.log.error({ unanswered }, `${unanswered} request(s) still open at exit`)
    }
  }
  // Still open (a client not reading its answer): it would hold close() forever.
  app.server.closeAllConnections()
  await app.close()
  return { drained, stopped, unanswered, exitCode: unanswered > 0 ? 1 : 0 }
}
