import Fastify, { LogController, type FastifyInstance } from 'fastify'
import type { Config } from './config.js'
import type { Runtime } from './runtime.js'
import rpcErrors from '../plugins/rpc-errors.js'
import originGuard from '../plugins/origin-guard.js'
import health from '../plugins/health.js'
import mcpHttp from '../plugins/mcp-http.js'

/** What buildApp composes. */
export interface AppDeps {
  /** The engine and its services (createRuntime). */
  runtime: Runtime
  /** HTTP settings; defaults to the runtime's config. */
  config?: Config
}

/** The HTTP server's Fastify instance type. */
export type App = FastifyInstance

/** Builds the Fastify app with every plugin registered, not listening (tests inject into it). */
export async function buildApp (deps: AppDeps): Promise<App> {
  const { runtime, config = runtime.config } = deps
  const app = Fastify({
    loggerInstance: runtime.log,
    // JSON bodies are parsed by the engine's parser (plugins/mcp-http), which refuses prototype-poisoning keys.
    bodyLimit: config.bodyLimit,
    // The engine logs every tool call ({ tool, durationMs, outcome }); two more lines per request would halve throughput.
    logController: new LogController({ disableRequestLogging: true }),
    // No per-request pino child (about 1 µs each): the few request-scoped lines carry reqId themselves.
    childLoggerFactory: (logger) => logger,
    // Draining is answered by mcp-http with a JSON-RPC-shaped 503, not Fastify's own body.
    return503OnClosing: false
  }) as unknown as App
  // JSON only: a text/plain body would reach the route as a string.
  app.removeContentTypeParser('text/plain')
  await app.register(rpcErrors)
  await app.register(originGuard, {
    host: config.host,
    allowedOrigins: config.allowedOrigins,
    allowedHosts: config.allowedHosts,
    publicPaths: ['/healthz', '/readyz']
  })
  await app.register(health)
  await app.register(mcpHttp, {
    server: runtime.server,
    mode: config.mode,
    path: '/mcp',
    maxSessions: config.maxSessions,
    sessionIdleMs: config.sessionIdleMs,
    maxInflightRequests: config.maxInflightRequests
  })
  return app
}
