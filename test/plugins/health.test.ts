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

t.test('/readyz answers 503 once the server drains', async (t) => {
  const { app } = await buildTestApp(t)
  let status = 0
  app.addHook('onClose', async () => {
    status = (await app.inject({ method: 'GET', url: '/readyz' })).statusCode
  })
  await app.ready()

  await app.close()

  t.equal(status, 503)
})

t.test('the health plugin on its own: ready until close', async (t) => {
  const { default: Fastify } = await import('fastify')
  const { default: health } = await import('../../plugins/health.js')
  const app = Fastify()
  await app.register(health)
  t.teardown(() => app.close())

  t.equal((await app.inject({ method: 'GET', url: '/readyz' })).statusCode, 200)
})
