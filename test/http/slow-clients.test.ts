import t from 'tap'
import net from 'node:net'
import { buildTestApp } from '../helpers/build-app.js'
import { waitUntil } from '../helpers/wait.js'

// Slow clients over real sockets (one listening app on 127.0.0.1): a connection that never finishes
// its request — silent, dribbling its headers, or stalling its body — is closed by the server once
// requestTimeoutMs has passed, instead of being held for minutes (Node's defaults). An open SSE
// response is not a slow request and stays open.

const TIMEOUT_MS = 1000

/** Opens a raw connection, lets `act` write to it, and resolves with how it ended, bounded by `guardMs`. */
function connection (port: number, act: (socket: net.Socket) => void, guardMs = 15_000): Promise<{ closedByServer: boolean, received: string }> {
  return new Promise(resolve => {
    const socket = net.connect(port, '127.0.0.1')
    let received = ''
    let dribble: NodeJS.Timeout | undefined
    const timer = setTimeout(() => { clearInterval(dribble); socket.destroy(); resolve({ closedByServer: false, received }) }, guardMs)
    socket.on('data', (chunk) => { received += chunk.toString() })
    socket.on('error', () => {})
    socket.once('close', () => { clearTimeout(timer); clearInterval(dribble); resolve({ closedByServer: true, received }) })
    socket.once('connect', () => {
      act(socket)
      if ((socket as net.Socket & { dribble?: boolean }).dribble === true) {
        dribble = setInterval(() => socket.write('X'), 200)
      }
    })
  })
}

t.test('silent, header-dribbling and body-stalling connections are closed after the request timeout', async (t) => {
  const { app } = await buildTestApp(t, { config: { requestTimeoutMs: TIMEOUT_MS } })
  await app.listen({ host: '127.0.0.1', port: 0 })
  const { port } = app.server.address() as net.AddressInfo

  const [silent, dribbling, stalled] = await Promise.all([
    connection(port, () => {}),
    connection(port, (socket) => {
      socket.write('POST /mcp HTTP/1.1\r\nHost: localhost\r\nX-Slow: ')
      ;(socket as net.Socket & { dribble?: boolean }).dribble = true
    }),
    connection(port, (socket) => {
      socket.write('POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 100\r\n\r\n{"jsonrpc":')
    })
  ])

  t.ok(silent.closedByServer, 'a socket that sends nothing')
  t.ok(dribbling.closedByServer, 'headers sent a byte at a time')
  t.ok(stalled.closedByServer, 'a body that stops halfway')
  t.match(stalled.received, /^HTTP\/1\.1 408/, 'the stalled request is told why')
})

t.test('an open GET stream outlives the request timeout: only requests are timed, not responses', async (t) => {
  const { app } = await buildTestApp(t, { config: { requestTimeoutMs: TIMEOUT_MS } })
  await app.listen({ host: '127.0.0.1', port: 0 })
  const { port } = app.server.address() as net.AddressInfo
  const init = await fetch(`http://127.0.0.1:${port}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } } })
  })
  const session = init.headers.get('mcp-session-id') as string

  const stream = await connection(port, (socket) => {
    socket.write(`GET /mcp HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\nMcp-Session-Id: ${session}\r\n\r\n`)
  }, TIMEOUT_MS * 4)

  t.notOk(stream.closedByServer, 'still open after four request timeouts')
  t.match(stream.received, /^HTTP\/1\.1 200/)
  t.match(stream.received, /text\/event-stream/)
})

t.test('a session whose only activity is an open GET stream is not reaped as idle; it is once the stream closes', async (t) => {
  // Idle time on a clock the test moves: the real sweep (every 150 ms) only looks.
  let now = Date.UTC(2026, 0, 1)
  const { app } = await buildTestApp(t, { config: { sessionIdleMs: 300 }, services: { clock: { now: () => now } } })
  await app.listen({ host: '127.0.0.1', port: 0 })
  const { port } = app.server.address() as net.AddressInfo
  const post = (session: string | undefined, body: Record<string, unknown>) => fetch(`http://127.0.0.1:${port}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...(session === undefined ? {} : { 'mcp-session-id': session }) },
    body: JSON.stringify(body)
  })
  const init = await post(undefined, { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } } })
  const session = init.headers.get('mcp-session-id') as string
  const controller = new AbortController()
  const stream = await fetch(`http://127.0.0.1:${port}/mcp`, { headers: { accept: 'text/event-stream', 'mcp-session-id': session }, signal: controller.signal })
  // A session without a stream, as idle: once the sweep has ended it, the sweep has looked at the other too.
  await post(undefined, { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'u', version: '1' } } })

  now += 1200
  await waitUntil(() => app.mcpStats().sessions === 1, 'the sweep to end the idle session without a stream')
  const whileStreaming = await post(session, { jsonrpc: '2.0', id: 2, method: 'ping' })
  controller.abort()
  // The server sees the stream close when its socket does: the clock moves on until then, each look past the limit.
  await waitUntil(() => {
    now += 400
    return app.mcpStats().sessions === 0
  }, 'the sweep to end the session whose stream closed')
  const afterwards = await post(session, { jsonrpc: '2.0', id: 3, method: 'ping' })

  t.equal(stream.status, 200)
  t.equal(whileStreaming.status, 200, 'four idle periods later, the streaming session is alive')
  t.equal(afterwards.status, 404, 'idle again without its stream: reaped')
})
