import fp from 'fastify-plugin'
import type { FastifyPluginAsync } from 'fastify'
import underPressure, { TYPE_EVENT_LOOP_DELAY, TYPE_HEAP_USED_BYTES } from '@fastify/under-pressure'
import { APP_ERR_MEMORY_PRESSURE, APP_ERR_OVERLOADED } from '../base/errors.js'
import type { Degradations } from '../services/degradations.js'

/** Options of load shedding; a limit of 0 turns its check off. */
export interface LoadSheddingOptions {
  /** Event-loop delay beyond which requests get 503, ms. */
  maxEventLoopDelayMs: number
  /** JavaScript heap in use beyond which requests get 503, bytes. */
  maxHeapUsedBytes: number
  /** Resident memory beyond which requests get 503, bytes. */
  maxRssBytes: number
  /** Where memory pressure is reported (component `memory`) when it starts, and its end. */
  degradations: Pick<Degradations, 'report' | 'recover'>
}

const MB = 1024 * 1024

/**
 * Sheds the requests of the context it is registered in with 503 + Retry-After while the process is behind
 * (event-loop delay) or short of memory (heap or RSS past its threshold, sampled each second by
 * @fastify/under-pressure): new work is refused before the heap runs out, and what runs may finish.
 * Memory pressure is logged once when it starts (with the threshold) and once when a request passes again.
 */
const loadShedding: FastifyPluginAsync<LoadSheddingOptions> = async (app, options) => {
  const { maxEventLoopDelayMs, maxHeapUsedBytes, maxRssBytes, degradations } = options
  if (maxEventLoopDelayMs === 0 && maxHeapUsedBytes === 0 && maxRssBytes === 0) return
  let short = false
  await app.register(underPressure, {
    maxEventLoopDelay: maxEventLoopDelayMs,
    maxHeapUsedBytes,
    maxRssBytes,
    pressureHandler: (_request, _reply, type) => {
      if (type === TYPE_EVENT_LOOP_DELAY) return Promise.reject(Object.assign(new APP_ERR_OVERLOADED(), { headers: { 'retry-after': '2' } }))
      short = true
      degradations.report('memory', type === TYPE_HEAP_USED_BYTES
        ? `the JavaScript heap in use is past ${Math.round(maxHeapUsedBytes / MB)} MB: /mcp answers 503 until it is freed`
        : `resident memory is past ${Math.round(maxRssBytes / MB)} MB: /mcp answers 503 until it is freed`)
      return Promise.reject(Object.assign(new APP_ERR_MEMORY_PRESSURE(), { headers: { 'retry-after': '2' } }))
    }
  })
  // Runs after under-pressure's own check: a request reaching it means memory is no longer short.
  app.addHook('onRequest', (_request, _reply, done) => {
    if (short) {
      short = false
      degradations.recover('memory')
    }
    done()
  })
}

export default fp(loadShedding, { name: 'load-shedding', fastify: '5.x', dependencies: ['rpc-errors'] })
