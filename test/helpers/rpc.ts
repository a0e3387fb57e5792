import type { Readable } from 'node:stream'
import type { App } from '../../src/app.js'
import { waitUntil } from './wait.js'

/** Headers a spec-following client sends on POST. */
export const CLIENT_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }

let nextId = 1

/** POSTs one JSON-RPC request to /mcp and returns the parsed JSON body (throws on a non-JSON answer). */
export async function rpcOverHttp (app: App, message: Record<string, unknown>, headers: Record<string, string> = {}): Promise<Record<string, any>> {
  const res = await postMcp(app, { jsonrpc: '2.0', id: nextId++, ...message }, headers)
  return res.json()
}

/** POSTs any body to /mcp (an object is JSON-encoded) and returns the raw inject response. */
export function postMcp (app: App, body: unknown, headers: Record<string, string> = {}) {
  return app.inject({
    method: 'POST',
    url: '/mcp',
    headers: { ...CLIENT_HEADERS, ...headers },
    payload: typeof body === 'string' ? body : JSON.stringify(body)
  })
}

/** Runs initialize + notifications/initialized and returns the session id (stateful mode). */
export async function openSession (app: App, capabilities: Record<string, unknown> = {}): Promise<string> {
  const res = await postMcp(app, {
    jsonrpc: '2.0',
    id: nextId++,
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities, clientInfo: { name: 'test', version: '1.0.0' } }
  })
  const id = res.headers['mcp-session-id']
  if (res.statusCode !== 200 || typeof id !== 'string') throw new Error(`initialize failed: ${res.statusCode} ${res.body}`)
  await postMcp(app, { jsonrpc: '2.0', method: 'notifications/initialized' }, { 'mcp-session-id': id })
  return id
}

/** Parses an SSE body into the JSON messages of its `data:` lines. */
export function sseMessages (body: string): Array<Record<string, any>> {
  // Priming events (an id with empty data, SEP-1699) carry no message.
  return body.split('\n').filter(line => line.startsWith('data: ') && line.length > 6).map(line => JSON.parse(line.slice(6)))
}

/** The lines a stdio server writes, collected as they arrive; `response(id)` waits (10 s unless told) for the answer to `id`. */
export function stdoutLines (stream: Readable, describe: () => string) {
  const lines: string[] = []
  let partial = ''
  const waiters: Array<() => void> = []
  stream.setEncoding('utf8')
  stream.on('data', (chunk: string) => {
    const parts = (partial + chunk).split('\n')
    partial = parts.pop() ?? ''
    lines.push(...parts)
    for (const wake of waiters.splice(0)) wake()
  })
  async function response (id: number | string, waitMs = 10000): Promise<Record<string, unknown>> {
    const deadline = Date.now() + waitMs
    while (Date.now() < deadline) {
      for (const line of lines) {
        const msg = JSON.parse(line)
        if (msg.id === id && ('result' in msg || 'error' in msg)) return msg
      }
      // Woken by the next chunk; the timer only looks at the deadline again when none comes.
      await new Promise<void>(resolve => { waiters.push(resolve); setTimeout(resolve, 200) })
    }
    throw new Error(`no response to ${id}; ${describe()}`)
  }
  return { lines, partial: () => partial, response }
}

/**
 * Waits (a minute at most) until a client's server says its code index is complete: the build runs at the lowest
 * priority, and on a machine busy with other test files it can outlast a call's own 3 s wait for it.
 */
export async function indexReady (client: { callTool: (call: { name: string, arguments: Record<string, unknown> }) => Promise<object> }): Promise<void> {
  await waitUntil(async () => {
    const info = ((await client.callTool({ name: 'get_workspace_info', arguments: {} })) as { structuredContent?: unknown }).structuredContent as { code_index?: { state: string, complete_as_of?: string } } | undefined
    return info?.code_index?.state === 'ready' && info.code_index.complete_as_of !== undefined
  }, 'the code index to be complete', 60_000, 100)
}
