import t from 'tap'
import net from 'node:net'
import Fastify from 'fastify'
import rpcErrors from '../../plugins/rpc-errors.js'
import { createRequestSlots } from '../../plugins/request-slots.js'
import { waitUntil } from '../helpers/wait.js'

// The accounting on its own, behind an onRequest hook that waits (as auth does while it fetches a key set):
// a client that leaves during that wait holds nothing afterwards, whether its POST had a body or not.

t.test('a client that leaves while an earlier hook waits holds no slot and is not counted as receiving', async (t) => {
  const slots = createRequestSlots({ maxInflight: 1, bodyTimeoutMs: 60_000 })
  const app = Fastify()
  await app.register(rpcErrors)
  let release: () => void = () => {}
  let gate = new Promise<void>(resolve => { release = resolve })
  let waiting = 0
  let handled = 0
  app.addHook('onRequest', async () => { waiting++; await gate })
  app.post('/mcp', { onRequest: slots.onRequest, preParsing: slots.preParsing, preValidation: slots.preValidation }, async () => { handled++; return 'answered' })
  t.teardown(async () => { slots.close(); await app.close() })
  await app.listen({ host: '127.0.0.1', port: 0 })
  const { port } = app.server.address() as net.AddressInfo
  let left = 0
  app.server.on('connection', (socket) => socket.once('close', () => { left++ }))

  for (const [i, request] of [
    'POST /mcp HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}',
    'POST /mcp HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n'
  ].entries()) {
    const client = net.connect(port, '127.0.0.1')
    client.write(request)
    await waitUntil(() => waiting === i + 1, 'the request to reach the waiting hook')
    client.destroy()
    await waitUntil(() => left === i + 1, 'the server to see the client leave')
    release()
    gate = new Promise<void>(resolve => { release = resolve })
  }
  release()
  await waitUntil(() => handled === 1, 'the bodiless POST to reach its handler after its client left')
  const after = await fetch(`http://127.0.0.1:${port}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })

  t.equal(handled, 2, 'the POST with a body never finished arriving; the others were answered')
  t.equal(slots.receiving, 0)
  t.equal(slots.inflight, 0)
  t.equal(after.status, 200, 'the one slot is free for the next client')
})
