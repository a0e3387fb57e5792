import t, { type Test } from 'tap'
import net from 'node:net'
import { Agent, fetch as undiciFetch } from 'undici'
import { Type } from '@sinclair/typebox'
import { buildTestApp } from '../helpers/build-app.js'
import { parkedTool, testTools } from '../helpers/engine.js'
import { defineTool, textResult } from '../../src/tool-api/define-tool.js'
import { waitUntil } from '../helpers/wait.js'

// Resumable SSE over real sockets (spec 2025-11-25 basic/transports, Resumability; SEP-1699): every event
// has an id, a stream starts with a priming event and a retry hint, and a GET with Last-Event-ID picks
// up that stream — a POST's until its response, never another stream's or another session's.

const streamTwice = defineTool({
  name: 'stream_twice',
  title: 'Stream twice',
  category: 'guide',
  description: 'Reports progress, closes its stream, reports progress again and answers.',
  annotations: {},
  input: Type.Object({}),
  async run (_args, ctx) {
    await ctx.progress(1, 3, 'before the close')
    ctx.closeStream()
    // Whether the client resumes before this progress or after, it gets it (live, or replayed).
    await new Promise(resolve => setTimeout(resolve, 50))
    await ctx.progress(2, 3, 'after the close')
    return textResult('done after resuming')
  }
})

interface SseEvent { id?: string, retry?: string, data: string }

/** Parses an SSE body into events (comments skipped). */
function parseSse (body: string): SseEvent[] {
  return body.split('\n\n').filter(block => block.trim() !== '' && !block.startsWith(':')).map(block => {
    const event: SseEvent = { data: '' }
    for (const line of block.split('\n')) {
      const at = line.indexOf(': ')
      const [field, value] = at === -1 ? [line.replace(/:$/, ''), ''] : [line.slice(0, at), line.slice(at + 2)]
      if (field === 'id') event.id = value
      else if (field === 'retry') event.retry = value
      else if (field === 'data') event.data = value
    }
    return event
  })
}

async function setup (t: Test) {
  const { app, runtime } = await buildTestApp(t, { tools: [...testTools, streamTwice] })
  const base = `${await app.listen({ host: '127.0.0.1', port: 0 })}/mcp`
  // Our own connection pool, destroyed before the app closes: an aborted stream's socket would
  // otherwise linger in keep-alive and hold close() for its timeout.
  const dispatcher = new Agent()
  t.teardown(() => dispatcher.destroy())
  const fetch: typeof undiciFetch = (url, init) => undiciFetch(url, { ...init, dispatcher })
  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }
  const post = (session: string | undefined, body: unknown) => fetch(base, { method: 'POST', headers: session === undefined ? headers : { ...headers, 'mcp-session-id': session }, body: JSON.stringify(body) })
  const open = async (): Promise<string> => {
    const init = await post(undefined, { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: { sampling: {} }, clientInfo: { name: 't', version: '1' } } })
    return init.headers.get('mcp-session-id') as string
  }
  /** GET (optionally resuming); reads until `until` says so or the server ends the stream. */
  const get = async (session: string, lastEventId?: string, until: (events: SseEvent[]) => boolean = () => false): Promise<{ status: number, events: SseEvent[], ended: boolean }> => {
    const controller = new AbortController()
    const res = await fetch(base, { headers: { accept: 'text/event-stream', 'mcp-session-id': session, ...(lastEventId === undefined ? {} : { 'last-event-id': lastEventId }) }, signal: controller.signal })
    let text = ''
    let ended = false
    // A bound on a stream that never brings what `until` waits for (a loaded machine may take seconds to).
    const guard = setTimeout(() => controller.abort(), 30_000)
    try {
      for await (const chunk of res.body as AsyncIterable<Uint8Array>) {
        text += Buffer.from(chunk).toString()
        if (until(parseSse(text))) break
      }
      ended = !controller.signal.aborted
    } catch {}
    clearTimeout(guard)
    controller.abort()
    return { status: res.status, events: parseSse(text), ended }
  }
  return { app, runtime, post, open, get, base, fetch }
}

const call = { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'stream_twice', arguments: {}, _meta: { progressToken: 'p' } } }

t.test('a POST stream starts with a priming event and a retry hint; every event carries an id', async (t) => {
  const { post, open } = await setup(t)
  const session = await open()

  const res = await post(session, { ...call, params: { name: 'slow_tool', arguments: { ms: 10 }, _meta: { progressToken: 'p' } } })
  const events = parseSse(await res.text())

  t.match(res.headers.get('content-type'), /text\/event-stream/)
  t.match(events[0], { id: /^[\w-]+\.0$/, retry: '1000', data: '' }, 'priming first')
  t.ok(events.every(e => e.id !== undefined), 'ids on every event')
  t.ok(events.slice(1).every(e => e.id?.startsWith(events[0].id!.slice(0, -1))), 'one stream, consecutive ids')
})

t.test('a stream closed mid-call is resumed with GET + Last-Event-ID: what came after, up to the response, then the end', async (t) => {
  const { post, open, get } = await setup(t)
  const session = await open()

  const res = await post(session, call)
  const before = parseSse(await res.text())
  const last = before.at(-1)!.id!
  const resumed = await get(session, last)

  t.equal(before.length, 2, 'priming and the first progress, then the server closed the POST')
  t.match(JSON.parse(before[1].data), { method: 'notifications/progress', params: { progress: 1 } })
  t.equal(resumed.status, 200)
  t.strictSame(resumed.events.map(e => JSON.parse(e.data)).map(m => m.method ?? m.result?.content?.[0]?.text), ['notifications/progress', 'done after resuming'])
  t.match(JSON.parse(resumed.events[1].data), { id: 7 })
  t.ok(resumed.ended, 'the resumed stream ends with the response it was waiting for')
  const ids = [...before, ...resumed.events].map(e => Number(e.id!.split('.')[1]))
  t.strictSame(ids, [0, 1, 2, 3], 'no event lost, none repeated')
})

t.test('the GET stream resumes from its own last id: a message sent while it was gone is replayed, then it carries on live', async (t) => {
  const { post, open, get, base, fetch, runtime } = await setup(t)
  const session = await open()
  const first = await get(session, undefined, events => events.length >= 1)
  // A JSON-only POST sends its related messages to the GET stream, which is disconnected now.
  const asking = fetch(base, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json', 'mcp-session-id': session }, body: JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'ask_client', arguments: {} } }) })
  // The tool sends its request as it starts (nothing comes between): a turn after it runs, the request is stored.
  await waitUntil(() => runtime.server.activeCalls().some(c => c.tool === 'ask_client'), 'the tool to run')
  await new Promise(resolve => setImmediate(resolve))

  const resumed = await get(session, first.events[0].id, events => events.some(e => e.data.includes('sampling/createMessage')))
  const request = JSON.parse(resumed.events.find(e => e.data.includes('sampling/createMessage'))!.data)
  await post(session, { jsonrpc: '2.0', id: request.id, result: { role: 'assistant', content: { type: 'text', text: 'sampled' }, model: 'm' } })
  const answer = await (await asking).json()

  t.match(first.events[0], { id: /\.0$/, data: '' })
  t.equal(resumed.events[0].id, first.events[0].id!.replace(/\.0$/, '.1'), 'the next event of the same stream, replayed')
  t.match(answer, { id: 3, result: { content: [{ text: /sampled/ }] } })
})

t.test('an unknown, foreign or malformed Last-Event-ID starts a fresh stream; another session\'s events never leak', async (t) => {
  const { post, open, get } = await setup(t)
  const mine = await open()
  const theirs = await open()
  const res = await post(theirs, call)
  const theirLast = parseSse(await res.text()).at(-1)!.id!

  const foreign = await get(mine, theirLast, events => events.length >= 1)
  const unknown = await get(mine, 'nothing.5', events => events.length >= 1)
  const malformed = await get(mine, 'no-sequence', events => events.length >= 1)

  for (const r of [foreign, unknown, malformed]) {
    t.equal(r.status, 200)
    t.match(r.events[0], { id: /\.0$/, data: '' }, 'a new priming event: a fresh stream')
    t.notOk(r.events.some(e => e.data.includes('after the close')), 'none of the other session\'s events')
  }
})

t.test('a client that takes no SSE gets the whole answer as JSON; closing its stream changes nothing', async (t) => {
  const { base, open, fetch } = await setup(t)
  const session = await open()

  const res = await fetch(base, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json', 'mcp-session-id': session }, body: JSON.stringify(call) })

  t.match(res.headers.get('content-type'), /application\/json/)
  t.match(await res.json(), { id: 7, result: { content: [{ text: 'done after resuming' }] } })
})

t.test('a streaming call cancelled by its client ends its stream without a response', async (t) => {
  const { post, open } = await setup(t)
  const session = await open()

  const res = await post(session, { jsonrpc: '2.0', id: 11, method: 'tools/call', params: { name: 'slow_tool', arguments: { ms: 5000 }, _meta: { progressToken: 'c' } } })
  const reader = (res.body as ReadableStream<Uint8Array>).getReader()
  let text = ''
  while (!text.includes('notifications/progress')) text += Buffer.from((await reader.read()).value ?? []).toString()
  await post(session, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 11, reason: 'changed my mind' } })
  for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) text += Buffer.from(chunk.value).toString()

  t.notMatch(text, /"id":11/, 'no response for a cancelled request (spec utilities/cancellation)')
})

t.test('ending a session closes its open GET stream', async (t) => {
  const { base, open, fetch } = await setup(t)
  const session = await open()
  const stream = await fetch(base, { headers: { accept: 'text/event-stream', 'mcp-session-id': session } })
  const reader = (stream.body as ReadableStream<Uint8Array>).getReader()
  await reader.read()

  const deleted = await fetch(base, { method: 'DELETE', headers: { 'mcp-session-id': session } })
  let done = false
  for (let chunk = await reader.read(); !done; chunk = await reader.read()) done = chunk.done

  t.equal(deleted.status, 200)
  t.ok(done, 'the server ended the stream')
})

t.test('stateless: a client that hangs up cancels its call; stateful: the call goes on to its answer', async (t) => {
  const seen: string[] = []
  let release!: () => void
  const parked = parkedTool(seen, new Promise<void>(resolve => { release = resolve }))
  for (const mode of ['stateless', 'stateful'] as const) {
    const { app } = await buildTestApp(t, { tools: [...testTools, parked], config: { mode } })
    const base = `${await app.listen({ host: '127.0.0.1', port: 0 })}/mcp`
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }
    if (mode === 'stateful') {
      const init = await fetch(base, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } } }) })
      headers['mcp-session-id'] = init.headers.get('mcp-session-id') as string
    }
    // A client that hangs up: a raw socket closed once the call has started (its first progress arrived).
    const body = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'parked', arguments: {}, _meta: { progressToken: 1 } } })
    const { port } = new URL(base)
    const socket = net.connect(Number(port), '127.0.0.1')
    socket.write(`POST /mcp HTTP/1.1\r\nHost: localhost\r\n${Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('')}Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`)
    await new Promise<void>(resolve => socket.on('data', (chunk) => { if (chunk.toString().includes('notifications/progress')) resolve() }))
    socket.destroy()
    if (mode === 'stateless') await waitUntil(() => seen.length === 1, 'the stateless call to end')
    else {
      // The request's slot is let go by the same close event that would abort a call: once it is, the call ran on.
      await waitUntil(() => app.mcpStats().inflight === 0, 'the server to see the hang-up')
      release()
      await waitUntil(() => seen.length === 2, 'the stateful call to end')
    }
  }

  t.strictSame(seen, ['aborted', 'finished'], 'the stateless call saw its signal abort; the stateful one ran to its end')
})
