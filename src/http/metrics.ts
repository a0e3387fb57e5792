import fp from 'fastify-plugin'
import type { FastifyPluginAsync } from 'fastify'
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client'
import type { McpServer } from '../mcp/server.js'
import type { Limiter } from '../services/limiter.js'
import type { CodeIndex } from '../services/code-index/index.js'
import type { Degradations } from '../services/degradations.js'

/** Options of the metrics endpoint. */
export interface MetricsOptions {
  /** The engine whose tool calls are counted. */
  server: McpServer
  /** The process-wide work limiter (running, queued, refused per kind), when the services have one. */
  limiter?: Limiter
  /** Where the Prometheus text is served. Default `/metrics`. */
  path?: string
  /** Live stateful sessions and POSTs in flight, read at scrape time. */
  sessions?: () => { sessions: number, inflight: number, receiving: number }
  /** The code index, when it is on: its state and store failures, read at scrape time. */
  codeIndex?: CodeIndex
  /** What keeps serving in a reduced way, read at scrape time. */
  degradations?: Degradations
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Counts a request refused by the rate limit (the rate-limit plugin reports each one). */
    countRateLimited(): void
  }
}

/**
 * `GET /metrics` in Prometheus text (prom-client): tool calls by tool and outcome with a latency
 * histogram, live sessions, POSTs and tool calls in flight, the work limiter's slots and queue,
 * rate-limited requests, and Node's own (event-loop delay, heap, GC). Its own registry: nothing
 * leaks between app instances.
 */
const metrics: FastifyPluginAsync<MetricsOptions> = async (app, options) => {
  const { server, limiter, path = '/metrics', sessions, codeIndex, degradations } = options
  const registry = new Registry()
  collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: 20 })

  const calls = new Counter({ name: 'mcp_tool_calls_total', help: 'Tool calls by tool and outcome.', labelNames: ['tool', 'outcome'], registers: [registry] })
  const latency = new Histogram({
    name: 'mcp_tool_call_duration_seconds',
    help: 'Tool call duration.',
    labelNames: ['tool'],
    buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry]
  })
  const rateLimited = new Counter({ name: 'mcp_rate_limited_requests_total', help: 'Requests refused by the per-client rate limit.', registers: [registry] })
  // Read at scrape time, so nothing is counted on the request path.
  const gauge = (config: ConstructorParameters<typeof Gauge>[0]): void => { registry.registerMetric(new Gauge({ ...config, registers: [] })) }
  gauge({ name: 'mcp_tool_calls_in_flight', help: 'Tool calls running now.', collect () { this.set(server.activeCalls().length) } })
  if (sessions !== undefined) {
    gauge({ name: 'mcp_sessions', help: 'Live stateful sessions on this replica.', collect () { this.set(sessions().sessions) } })
    gauge({ name: 'mcp_http_requests_in_flight', help: 'POSTs being answered now (their bodies arrived).', collect () { this.set(sessions().inflight) } })
    gauge({ name: 'mcp_http_requests_receiving', help: 'POSTs whose body is still arriving (they hold no in-flight slot).', collect () { this.set(sessions().receiving) } })
  }
  if (limiter !== undefined) {
    const read = (field: 'running' | 'queued' | 'refused') => function (this: Gauge) {
      for (const [kind, stats] of Object.entries(limiter.stats())) this.set({ kind }, stats[field])
    }
    gauge({ name: 'mcp_limiter_running', help: 'Expensive work running, by kind (search, walk, read).', labelNames: ['kind'], collect: read('running') })
    gauge({ name: 'mcp_limiter_queued', help: 'Expensive work waiting for a slot, by kind.', labelNames: ['kind'], collect: read('queued') })
    gauge({ name: 'mcp_limiter_refused', help: 'Calls refused with BUSY since start, by kind.', labelNames: ['kind'], collect: read('refused') })
  }

  if (codeIndex !== undefined) {
    const states = ['building', 'ready', 'failed', 'unavailable'] as const
    gauge({
      name: 'mcp_code_index_state',
      help: 'The code index\'s state: 1 for the one it is in (unavailable: its store cannot be written).',
      labelNames: ['state'],
      collect () { const now = codeIndex.status().state; for (const state of states) this.set({ state }, state === now ? 1 : 0) }
    })
    let counted = 0
    registry.registerMetric(new Counter({
      name: 'mcp_code_index_store_failures_total',
      help: 'Times writing the code index failed (a full disk, the size limit, a read-only or failing state folder).',
      registers: [],
      collect () {
        const failures = codeIndex.status().failures
        this.inc(failures - counted)
        counted = failures
      }
    }))
  }
  if (degradations !== undefined) {
    gauge({
      name: 'mcp_degraded',
      help: 'Parts serving in a reduced way now (1 each, by component): exact token counts, task heartbeats, session records, key sets.',
      labelNames: ['component'],
      collect () {
        this.reset()
        for (const { component } of degradations.current()) this.set({ component }, 1)
      }
    })
    const reported = new Map<string, number>()
    registry.registerMetric(new Counter({
      name: 'mcp_degraded_reports_total',
      help: 'Failures reported by parts that kept serving in a reduced way, by component.',
      labelNames: ['component'],
      registers: [],
      collect () {
        for (const [component, total] of degradations.totals()) {
          this.inc({ component }, total - (reported.get(component) ?? 0))
          reported.set(component, total)
        }
      }
    }))
  }
  const stop = server.observeCalls((tool, outcome, seconds) => {
    calls.inc({ tool, outcome })
    latency.observe({ tool }, seconds)
  })
  app.decorate('countRateLimited', () => { rateLimited.inc() })
  // Scrapers come by the pod's address, whatever Host they send.
  app.get(path, { config: { anyHost: true } }, async (_request, reply) => reply.type(registry.contentType).send(await registry.metrics()))
  app.addHook('onClose', async () => {
    stop()
    registry.clear()
  })
}

export default fp(metrics, { name: 'metrics', fastify: '5.x' })
