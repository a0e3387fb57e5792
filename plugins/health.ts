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
}

const OK = '{"status":"ok"}'
const CLOSING = '{"status":"closing"}'

/** `GET /healthz` (the process answers) and `GET /readyz` (it accepts new work). */
const health: FastifyPluginAsync<HealthOptions> = async (app, options) => {
  const { livePath = '/healthz', readyPath = '/readyz', isDraining = () => false } = options
  let closing = false

  app.get(livePath, (_request, reply) => {
    reply.type('application/json').send(OK)
  })
  app.get(readyPath, (_request, reply) => {
    const draining = closing || isDraining()
    if (draining) reply.code(503).header('retry-after', '1')
    reply.type('application/json').send(draining ? CLOSING : OK)
  })
  app.addHook('preClose', async () => { closing = true })
}

export default fp(health, { name: 'health', fastify: '5.x' })
