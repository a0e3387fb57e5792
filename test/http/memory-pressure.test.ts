import t from 'tap'
import { getHeapStatistics } from 'node:v8'
import { buildTestApp } from '../helpers/build-app.js'
import { postMcp } from '../helpers/rpc.js'
import { memoryLimitsOf } from '../../src/http-options.js'
import type { App } from '../../src/app.js'
import { waitUntil } from '../helpers/wait.js'

// Memory pressure sheds /mcp with 503 before the heap runs out, without exhausting memory here: the reading
// @fastify/under-pressure samples each second (process.memoryUsage) is replaced for the test, or the threshold
// is set below what the process uses.

const PING = { jsonrpc: '2.0', id: 1, method: 'ping' }

/** POSTs a ping until its status is `status` (the next sample decides), as a client retrying would; resolves that answer. */
async function pingUntil (app: App, status: number) {
  let res = await postMcp(app, PING)
  await waitUntil(async () => {
    if (res.statusCode !== status) res = await postMcp(app, PING)
    return res.statusCode === status
  }, `a ping answered ${status}`, 30_000, 20)
  return res
}

t.test('a heap past maxHeapUsedPercent of the heap limit sheds /mcp with 503 + Retry-After, logged once; probes answer; it ends when memory is freed', async (t) => {
  const real = process.memoryUsage
  t.teardown(() => { process.memoryUsage = real })
  const { app, lines } = await buildTestApp(t, { config: { mode: 'stateless', maxEventLoopDelayMs: 0 } })
  const limit = getHeapStatistics().heap_size_limit
  const { maxHeapUsedBytes } = memoryLimitsOf({ maxHeapUsedPercent: 85, maxRssMb: 0 })

  process.memoryUsage = Object.assign(() => ({ ...real(), heapUsed: Math.floor(limit * 0.9) }), { rss: real.rss })
  const shed = await pingUntil(app, 503)
  const again = await postMcp(app, PING)
  const probe = await app.inject({ method: 'GET', url: '/healthz' })
  const ready = await app.inject({ method: 'GET', url: '/readyz' })
  process.memoryUsage = real
  const served = await pingUntil(app, 200)
  const readyAfter = await app.inject({ method: 'GET', url: '/readyz' })

  t.equal(shed.statusCode, 503)
  t.equal(shed.headers['retry-after'], '2')
  t.strictSame(shed.json(), { jsonrpc: '2.0', id: null, error: { code: -32000, message: 'Server overloaded: memory is short; retry later' } })
  t.equal(again.statusCode, 503, 'every request until the next sample')
  t.equal(probe.statusCode, 200, 'the probes are not shed')
  const reason = `the JavaScript heap in use is past ${Math.round(maxHeapUsedBytes / 1048576)} MB: /mcp answers 503 until it is freed`
  t.same(ready.json().degraded, [`memory: ${reason}`], '/readyz says why')
  t.equal(lines.filter(l => l.msg === `degraded: memory: ${reason}`).length, 1, 'one warn line however many requests were shed')
  t.equal(served.statusCode, 200, 'served again once the heap is below the threshold')
  t.ok(lines.some(l => l.msg === 'recovered: memory' && l.level === 30), 'and an info line says so')
  t.same(readyAfter.json(), { status: 'ok' })
})

t.test('resident memory past maxRssMb sheds /mcp the same way', async (t) => {
  const { app, runtime } = await buildTestApp(t, { config: { mode: 'stateless', maxEventLoopDelayMs: 0, maxHeapUsedPercent: 0, maxRssMb: 1 } })

  const shed = await pingUntil(app, 503)

  t.equal(shed.statusCode, 503)
  t.match(shed.json(), { error: { message: /memory is short/ } })
  t.match(runtime.degradations.current(), [{ component: 'memory', reason: 'resident memory is past 1 MB: /mcp answers 503 until it is freed' }])
})

t.test('memory limits: a percentage of the heap limit V8 reports (or is given), RSS in MB, 0 for off', async (t) => {
  t.same(memoryLimitsOf({ maxHeapUsedPercent: 85, maxRssMb: 0 }, 1000), { maxHeapUsedBytes: 850, maxRssBytes: 0 })
  t.same(memoryLimitsOf({ maxHeapUsedPercent: 0, maxRssMb: 512 }, 1000), { maxHeapUsedBytes: 0, maxRssBytes: 512 * 1048576 })
  t.equal(memoryLimitsOf({ maxHeapUsedPercent: 100, maxRssMb: 0 }).maxHeapUsedBytes, getHeapStatistics().heap_size_limit)
})

t.test('with every check off nothing is shed', async (t) => {
  const { app } = await buildTestApp(t, { config: { mode: 'stateless', maxEventLoopDelayMs: 0, maxHeapUsedPercent: 0, maxRssMb: 0 } })

  const res = await postMcp(app, PING)

  t.equal(res.statusCode, 200)
})
