// The soak's client side: raw Streamable HTTP (fetch) so each request can be aborted, cancelled or
// left half-read exactly as a misbehaving agent would. Every outcome is classified as expected or not.
const PROTOCOL = '2025-11-25'
const CALL_TIMEOUT_MS = 30_000

/** Thrown for an outcome the server should never produce; the soak counts and reports these. */
export class Unexpected extends Error {}

/** The JSON-RPC messages of a POST's answer, whether it came as JSON or as an SSE stream. */
async function messagesOf (res) {
  const text = await res.text()
  if (text === '') return []
  if ((res.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    return text.split(/\r?\n/).filter(line => line.startsWith('data:') && line.length > 5).map(line => JSON.parse(line.slice(5)))
  }
  return [JSON.parse(text)]
}

/** One client identity (a bearer token) talking to one server URL. */
export class SoakClient {
  constructor (url, token) {
    this.url = url
    this.token = token
    this.nextId = 1
    /** GET streams answered 409 because this client's previous one was not yet seen closed. */
    this.streamRetries = 0
  }

  headers (session) {
    const headers = {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: `Bearer ${this.token}`,
      'mcp-protocol-version': PROTOCOL
    }
    if (session !== undefined) headers['mcp-session-id'] = session
    return headers
  }

  post (session, body, signal = AbortSignal.timeout(CALL_TIMEOUT_MS)) {
    return fetch(this.url, { method: 'POST', headers: this.headers(session), body: JSON.stringify(body), signal })
  }

  /** initialize + notifications/initialized; returns the session id. */
  async open () {
    const params = { protocolVersion: PROTOCOL, capabilities: {}, clientInfo: { name: 'soak', version: '1' } }
    const res = await this.post(undefined, { jsonrpc: '2.0', id: this.nextId++, method: 'initialize', params })
    const session = res.headers.get('mcp-session-id')
    const [message] = await messagesOf(res)
    if (res.status !== 200 || session === null || message?.result === undefined) throw new Unexpected(`initialize: HTTP ${res.status} ${JSON.stringify(message)}`)
    const ack = await this.post(session, { jsonrpc: '2.0', method: 'notifications/initialized' })
    await ack.arrayBuffer()
    if (ack.status !== 202) throw new Unexpected(`notifications/initialized: HTTP ${ack.status}`)
    return session
  }

  /** A request that must be answered with a result; `toolError` says whether isError is expected. */
  async request (session, method, params, { toolError = false } = {}) {
    const id = this.nextId++
    const res = await this.post(session, { jsonrpc: '2.0', id, method, params })
    const messages = await messagesOf(res)
    const answer = messages.find(m => m.id === id)
    if (res.status !== 200 || answer === undefined || answer.error !== undefined) {
      throw new Unexpected(`${method} ${params?.name ?? ''}: HTTP ${res.status} ${JSON.stringify(answer ?? messages).slice(0, 300)}`)
    }
    if (method === 'tools/call' && (answer.result.isError === true) !== toolError) {
      throw new Unexpected(`${params.name}: isError ${answer.result.isError === true}, expected ${toolError}: ${JSON.stringify(answer.result.content).slice(0, 300)}`)
    }
    return answer.result
  }

  /** A call whose connection the client drops after `afterMs`: the server must shrug it off. */
  async abort (session, params, afterMs) {
    const controller = new AbortController()
    const timer = setTimeout(() => controller.abort(), afterMs)
    try {
      const res = await this.post(session, { jsonrpc: '2.0', id: this.nextId++, method: 'tools/call', params }, controller.signal)
      await res.arrayBuffer()
    } catch (error) {
      if (error.name !== 'AbortError') throw error
    } finally {
      clearTimeout(timer)
    }
  }

  /** A call cancelled with notifications/cancelled after `afterMs`: answered or ended without an answer. */
  async cancel (session, params, afterMs) {
    const id = this.nextId++
    const pending = this.post(session, { jsonrpc: '2.0', id, method: 'tools/call', params })
    await new Promise(resolve => setTimeout(resolve, afterMs))
    const note = await this.post(session, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason: 'soak' } })
    await note.arrayBuffer()
    if (note.status !== 202) throw new Unexpected(`notifications/cancelled: HTTP ${note.status}`)
    const res = await pending
    const messages = await messagesOf(res)
    if (res.status >= 300) throw new Unexpected(`cancelled call: HTTP ${res.status}`)
    const answer = messages.find(m => m.id === id)
    if (answer?.error !== undefined) throw new Unexpected(`cancelled call: ${JSON.stringify(answer.error)}`)
  }

  /** The standalone GET stream, held open for `holdMs` and then dropped. */
  async stream (session, holdMs) {
    const controller = new AbortController()
    let res
    // A session has one GET stream: right after this client dropped its last one, the server may not
    // have seen the close yet and answers 409, as documented. A real client backs off and retries.
    for (let attempt = 0; ; attempt++) {
      res = await fetch(this.url, { headers: { ...this.headers(session), accept: 'text/event-stream' }, signal: controller.signal })
      if (res.status !== 409 || attempt === 3) break
      await res.arrayBuffer()
      this.streamRetries++
      await new Promise(resolve => setTimeout(resolve, 25 * 2 ** attempt))
    }
    if (res.status !== 200) throw new Unexpected(`GET stream: HTTP ${res.status}`)
    await new Promise(resolve => setTimeout(resolve, holdMs))
    controller.abort()
    await res.body?.cancel().catch(() => {})
  }

  /** A fault injected on purpose (a wrong token, a body that is not JSON): each has exactly one right answer. */
  async fault (session, kind) {
    const headers = this.headers(session)
    if (kind === 'bad-token') headers.authorization = 'Bearer not-a-token'
    const body = kind === 'bad-token' ? '{}' : '{"jsonrpc": "2.0", "id": 1, "method": '
    const res = await fetch(this.url, { method: 'POST', headers, body, signal: AbortSignal.timeout(CALL_TIMEOUT_MS) })
    await res.arrayBuffer()
    const expected = kind === 'bad-token' ? 401 : 400
    if (res.status !== expected) throw new Unexpected(`${kind}: HTTP ${res.status}, expected ${expected}`)
  }

  async close (session) {
    const res = await fetch(this.url, { method: 'DELETE', headers: this.headers(session), signal: AbortSignal.timeout(CALL_TIMEOUT_MS) })
    await res.arrayBuffer()
    if (res.status !== 200 && res.status !== 204) throw new Unexpected(`DELETE: HTTP ${res.status}`)
  }
}
