import t, { type Test } from 'tap'
import net from 'node:net'
import { Agent, request } from 'undici'
import { buildTestApp } from '../helpers/build-app.js'
import { waitUntil } from '../helpers/wait.js'
import type { Config } from '../../src/base/config.js'

// Hostile clients over real sockets on 127.0.0.1 (all from one address, as an attacker's would be): POSTs
// that send their headers and stall their bodies, bodies trickled a byte at a time, headers dribbled. None
// of them may lock out a normal client beside them: a POST counts toward maxInflightRequests only once its
// body has arrived, and a body that has not arrived within bodyTimeoutMs is answered 408 and its connection
// closed.

const CAP = 8
const STALLED = 20
const HEAD = 'POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n'
const INIT = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'normal', version: '1' } } }

/** A raw connection: what it received, and whether the server closed it. */
interface Raw { socket: net.Socket, received: string, closed: boolean }

function open (port: number, first: string): Raw {
  const socket = net.connect(port, '127.0.0.1')
  const raw: Raw = { socket, received: '', closed: false }
  socket.on('data', (chunk) => { raw.received += chunk.toString() })
  socket.on('error', () => {})
  socket.once('close', () => { raw.closed = true })
  socket.write(first)
  return raw
}

async function listening (t: Test, config: Partial<Config>) {
  const built = await buildTestApp(t, { config: { maxInflightRequests: CAP, ...config } })
  const base = await built.app.listen({ host: '127.0.0.1', port: 0 })
  const { port } = built.app.server.address() as net.AddressInfo
  const dispatcher = new Agent()
  const raws: Raw[] = []
  t.teardown(async () => {
    for (const raw of raws) raw.socket.destroy()
    await dispatcher.close()
  })
  const post = async (body: unknown, session?: string) => {
    const res = await request(`${base}/mcp`, {
      dispatcher,
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...(session === undefined ? {} : { 'mcp-session-id': session }) },
      body: JSON.stringify(body)
    })
    return { status: res.statusCode, session: res.headers['mcp-session-id'] as string | undefined, body: await res.body.text() }
  }
  return { ...built, port, raws, post }
}

t.test(`${STALLED} POSTs from one address that stall their bodies hold no in-flight slot: a normal client beside them (cap ${CAP}) keeps getting answers`, async (t) => {
  const { app, port, raws, post } = await listening(t, { bodyTimeoutMs: 60_000 })
  for (let i = 0; i < STALLED; i++) raws.push(open(port, `${HEAD}Content-Length: 100\r\n\r\n{"jsonrpc":`))
  // (receiving is undefined on the code this replaced: it counted a POST from its headers.)
  const stats = () => app.mcpStats() as { inflight: number, receiving?: number }
  // Every stalled POST is either held by the server or already answered (the code this replaced refused those past the cap).
  await waitUntil(() => stats().inflight + (stats().receiving ?? 0) + raws.filter(r => r.received !== '').length === STALLED, 'the server to hold every stalled POST')

  const init = await post(INIT)
  const pings = []
  for (let id = 2; id < 2 + CAP * 2; id++) pings.push(await post({ jsonrpc: '2.0', id, method: 'ping' }, init.session))

  t.equal(stats().receiving, STALLED, 'every stalled POST is held, waiting for its body')
  t.equal(stats().inflight, 0, 'none of them counts toward the in-flight cap')
  t.ok(raws.every(r => r.received === ''), 'none was refused or answered yet')
  t.equal(init.status, 200, 'the normal client opens its session')
  t.strictSame(pings.map(p => p.status), pings.map(() => 200), `and gets ${CAP * 2} answers in a row`)
})

t.test('a body that stalls, or trickles a byte at a time, is answered 408 with a JSON-RPC body once bodyTimeoutMs has passed, and its connection closed', async (t) => {
  const { app, port, raws, post } = await listening(t, { bodyTimeoutMs: 400 })
  const stalled = open(port, `${HEAD}Content-Length: 100\r\n\r\n{"jsonrpc":`)
  const trickled = open(port, `${HEAD}Content-Length: 100000\r\n\r\n`)
  raws.push(stalled, trickled)
  // The trickle keeps going until the server closes the connection: progress alone does not extend the deadline.
  const drip = setInterval(() => { if (!trickled.closed) trickled.socket.write(' ') }, 20)
  t.teardown(() => clearInterval(drip))

  await waitUntil(() => stalled.closed && trickled.closed, 'the server to close both connections')
  const after = await post({ jsonrpc: '2.0', id: 9, method: 'ping' })

  for (const raw of [stalled, trickled]) {
    t.match(raw.received, /^HTTP\/1\.1 408 /)
    t.match(raw.received, /\r\nconnection: close\r\n/i)
    const body = JSON.parse(raw.received.slice(raw.received.indexOf('\r\n\r\n') + 4))
    t.match(body, { jsonrpc: '2.0', id: null, error: { code: -32000, message: /body did not arrive within 400 ms/ } })
  }
  t.equal(app.mcpStats().receiving, 0, 'nothing is left waiting')
  t.equal(after.status, 400, 'the server still answers (this POST has no session)')
})

t.test('headers dribbled a byte at a time never reach the endpoint: nothing is held, normal clients are served', async (t) => {
  const { app, port, raws, post } = await listening(t, { bodyTimeoutMs: 60_000, headersTimeoutMs: 1000, requestTimeoutMs: 2000 })
  for (let i = 0; i < STALLED; i++) raws.push(open(port, 'POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: '))
  const drip = setInterval(() => { for (const raw of raws) if (!raw.closed) raw.socket.write('x') }, 50)
  t.teardown(() => clearInterval(drip))

  const init = await post(INIT)
  const held = app.mcpStats()
  await waitUntil(() => raws.every(r => r.closed), 'the server to close every dribbling connection')

  t.equal(init.status, 200)
  t.match(held, { inflight: 0, receiving: 0 })
  t.ok(raws.every(r => /^HTTP\/1\.1 408 /.test(r.received)), 'each is told 408 by the headers timeout')
})
