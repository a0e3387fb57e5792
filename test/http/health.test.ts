import t from 'tap'
import { buildTestApp } from '../helpers/build-app.js'

t.test('GET /healthz and /readyz answer {"status":"ok"}', async (t) => {
  const { app } = await buildTestApp(t)

  const live = await app.inject({ method: 'GET', url: '/healthz' })
  const ready = await app.inject({ method: 'GET', url: '/readyz' })

  t.equal(live.statusCode, 200)
  t.match(live.headers['content-type'], /^application\/json/)
  t.same(live.json(), { status: 'ok' })
  t.same(ready.json(), { status: 'ok' })
})

t.test('/readyz answers 503 once the server drains, while /healthz still answers', async (t) => {
  const { app } = await buildTestApp(t)
  const before = await app.inject({ method: 'GET', url: '/readyz' })

  await app.mcpDrain(0)
  const ready = await app.inject({ method: 'GET', url: '/readyz' })
  const live = await app.inject({ method: 'GET', url: '/healthz' })

  t.equal(before.statusCode, 200)
  t.equal(ready.statusCode, 503)
  t.equal(ready.headers['retry-after'], '1')
  t.equal(live.statusCode, 200)
})

t.test('the health plugin on its own: ready until close begins, then 503 while connections finish', async (t) => {
  const { default: Fastify } = await import('fastify')
  const { default: health } = await import('../../src/http/health.js')
  const app = Fastify()
  await app.register(health)
  let during = 0
  // Registered after health's own preClose hook, so it runs once the plugin knows the server is closing,
  // while the listener is still open.
  app.addHook('preClose', async () => { during = (await fetch(`${url}/readyz`)).status })
  const url = await app.listen({ host: '127.0.0.1', port: 0 })
  const before = (await fetch(`${url}/readyz`)).status

  await app.close()

  t.equal(before, 200)
  t.equal(during, 503)
})
