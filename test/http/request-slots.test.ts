import t from 'tap'
import net from 'node:net'
import Fastify from 'fastify'
import rpcErrors from '../../src/http/rpc-errors.js'
import { createRequestSlots } from '../../src/http/request-slots.js'
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

t.test('a POST whose body arrives once every slot is taken gets 503 + Retry-After then, after its body was read', async (t) => {
  const slots = createRequestSlots({ maxInflight: 1, bodyTimeoutMs: 60_000 })
  const app = Fastify()
  await app.register(rpcErrors)
  let release: () => void = () => {}
  const gate = new Promise<void>(resolve => { release = resolve })
  app.post('/mcp', { onRequest: slots.onRequest, preParsing: slots.preParsing, preValidation: slots.preValidation }, async () => { await gate; return 'answered' })
  t.teardown(async () => { release(); slots.close(); await app.close() })
  await app.listen({ host: '127.0.0.1', port: 0 })
  const { port } = app.server.address() as net.AddressInfo
  const late = net.connect(port, '127.0.0.1')
  let answer = ''
  late.on('data', (chunk) => { answer += chunk.toString() })
  late.write('POST /mcp HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{')
  await waitUntil(() => slots.receiving === 1, 'the late POST to be receiving its body')
  const held = fetch(`http://127.0.0.1:${port}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })
  await waitUntil(() => slots.inflight === 1, 'the other POST to take the one slot')

  late.write('}')
  await waitUntil(() => answer.includes('\r\n\r\n{'), 'the late POST to be answered')
  release()
  const first = await held

  t.match(answer, /^HTTP\/1\.1 503 /)
  t.match(answer, /\r\nretry-after: 1\r\n/i)
  t.match(answer, /"message":"Server overloaded: too many requests in flight; retry later"/)
  t.equal(first.status, 200)
  late.destroy()
})
