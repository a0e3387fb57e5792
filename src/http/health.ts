import fp from 'fastify-plugin'
import type { FastifyPluginAsync } from 'fastify'

/** Options for the probe routes. */
export interface HealthOptions {
  /** Liveness path. Default `'/healthz'`. */
  livePath?: string
  /** Readiness path; answers 503 once the server starts draining. Default `'/readyz'`. */
  readyPath?: string
  /** True while the server drains before closing (the listener is still open). Default: never. */
  isDraining?: () => boolean
  /** Why the server cannot do its work now (the root is gone, ripgrep is missing), or undefined. Default: never. */
  unusable?: () => string | undefined
  /** What does not work while the rest does (the code index cannot be written): listed in /readyz's body, still 200. */
  degraded?: () => string[]
}

const OK = '{"status":"ok"}'
const CLOSING = '{"status":"closing"}'

/** `GET /healthz` (the process answers) and `GET /readyz` (it accepts new work). */
const health: FastifyPluginAsync<HealthOptions> = async (app, options) => {
  const { livePath = '/healthz', readyPath = '/readyz', isDraining = () => false, unusable = () => undefined, degraded = () => [] } = options
  let closing = false

  // Probes come by the pod's address, whatever Host the orchestrator sends.
  const route = { config: { anyHost: true } }
  app.get(livePath, route, (_request, reply) => {
    reply.type('application/json').send(OK)
  })
  app.get(readyPath, route, (_request, reply) => {
    if (closing || isDraining()) return reply.code(503).header('retry-after', '1').type('application/json').send(CLOSING)
    const problem = unusable()
    if (problem !== undefined) return reply.code(503).type('application/json').send(JSON.stringify({ status: 'unusable', reason: problem }))
    // Ready all the same: the other tools serve, and a pod taken out of rotation would serve none of them.
    const partial = degraded()
    return reply.type('application/json').send(partial.length === 0 ? OK : JSON.stringify({ status: 'ok', degraded: partial }))
  })
  app.addHook('preClose', async () => { closing = true })
}

export default fp(health, { name: 'health', fastify: '5.x' })
