import t from 'tap'
import net from 'node:net'
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { buildTestApp } from './helpers/build-app.js'
import { byRegionTool, parkedTool, testTools } from './helpers/engine.js'
import { httpInProcess, stdioInProcess } from './helpers/in-process.js'
import { waitUntil } from './helpers/wait.js'

// 2026-07-28 over the real transports, in this process: the same bytes on stdio and HTTP, both eras on one HTTP
// server, a closed response stream cancelling its call, and the official SDK v2 client (negotiating,
// and pinned) calling every product tool over both.

const root = mkdtempSync(join(tmpdir(), 'wmcp-modern-'))
mkdirSync(join(root, 'src'))
writeFileSync(join(root, 'README.md'), '# Modern\n\nHello modern world.\n')
writeFileSync(join(root, 'src', 'app.ts'), 'export function hello () {\n  return "hello"\n}\n')

const META = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} }
const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28' }
const rpc = (id: number | string, method: string, params: Record<string, unknown> = {}) => ({ jsonrpc: '2.0', id, method, params: { ...params, _meta: META } })

async function post (url: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number, text: string, headers: Headers }> {
  const method = (body as { method: string }).method
  const res = await fetch(url, { method: 'POST', headers: { ...HEADERS, 'mcp-method': method, ...headers }, body: JSON.stringify(body) })
  return { status: res.status, text: await res.text(), headers: res.headers }
}

t.test('server/discover and the modern tools/list are byte-identical over stdio and HTTP', async (t) => {
  const http = await httpInProcess(t, ['--root', root])
  const proc = await stdioInProcess(t, ['--root', root])
  for (const [id, method] of [['d', 'server/discover'], ['l', 'tools/list']]) {
    proc.send(rpc(id, method))
    await proc.response(id)
    const overStdio = proc.stdout.find(line => JSON.parse(line).id === id)
    const overHttp = await post(http.url, rpc(id, method))
    t.equal(overHttp.status, 200)
    t.equal(overHttp.text, overStdio, `${method}: the same bytes`)
    t.match(JSON.parse(overHttp.text).result, { resultType: 'complete', cacheScope: 'public' })
  }
})

t.test('one HTTP server: a 2025 session and 2026 requests interleaved each get their own era\'s answers', async (t) => {
  const http = await httpInProcess(t, ['--root', root])
  const legacyHeaders = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }
  const init = await fetch(http.url, { method: 'POST', headers: legacyHeaders, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } } }) })
  const session = init.headers.get('mcp-session-id') as string
  const legacy = async (id: number, method: string, params: Record<string, unknown> = {}) => JSON.parse(await (await fetch(http.url, { method: 'POST', headers: { ...legacyHeaders, 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' }, body: JSON.stringify({ jsonrpc: '2.0', id, method, params }) })).text())

  const a = await legacy(2, 'tools/call', { name: 'read_files', arguments: { files: [{ path: 'README.md' }] } })
  const b = JSON.parse((await post(http.url, rpc(3, 'tools/call', { name: 'read_files', arguments: { files: [{ path: 'README.md' }] } }), { 'mcp-name': 'read_files' })).text)
  const c = await legacy(4, 'ping')
  const d = await post(http.url, rpc(5, 'ping'))

  t.notOk('resultType' in a.result, 'the session\'s answer is 2025-shaped')
  t.equal(b.result.resultType, 'complete')
  t.same(b.result.content, a.result.content, 'the same tool answer in both eras')
  t.same(c.result, {}, 'ping lives on in the session')
  t.match([d.status, JSON.parse(d.text)], [404, { id: 5, error: { code: -32601 } }], 'and is gone in 2026')
  t.equal(d.headers.get('mcp-session-id'), null, 'a 2026 request opens no session')
  const note = await fetch(http.url, { method: 'POST', headers: { ...HEADERS, 'mcp-method': 'notifications/cancelled' }, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 3 } }) })
  t.equal(note.status, 202, 'a 2026 notification is accepted')
})

t.test('a 2026 request whose response stream closes is cancelled; a 2025 stateful one runs on', async (t) => {
  const seen: string[] = []
  const parked = parkedTool(seen)
  const { app, runtime } = await buildTestApp(t, { tools: [...testTools, parked], config: { mode: 'stateful' } })
  const base = `${await app.listen({ host: '127.0.0.1', port: 0 })}/mcp`
  const body = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'parked', arguments: {}, _meta: { ...META, progressToken: 1 } } })
  const socket = net.connect(Number(new URL(base).port), '127.0.0.1')
  const headers = { ...HEADERS, 'mcp-method': 'tools/call', 'mcp-name': 'parked' }
  socket.write(`POST /mcp HTTP/1.1\r\nHost: localhost\r\n${Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('')}Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`)
  await new Promise<void>(resolve => socket.on('data', (chunk) => { if (chunk.toString().includes('notifications/progress')) resolve() }))
  socket.destroy()
  await waitUntil(() => seen.length > 0, 'the parked call to end')
  t.same(seen, ['aborted'], 'it ended at its signal (it is released by nothing else)')

  const note = await fetch(base, { method: 'POST', headers: { ...HEADERS, 'mcp-method': 'notifications/cancelled' }, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 3 } }) })
  t.equal(note.status, 202, 'a 2026 notification is accepted (a request is cancelled by closing its stream)')

  // Hung up before anything was streamed: the call is cancelled all the same, and nothing is written.
  const quiet = JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'slow_tool', arguments: { ms: 60_000 }, _meta: META } })
  const early = net.connect(Number(new URL(base).port), '127.0.0.1')
  early.write(`POST /mcp HTTP/1.1\r\nHost: localhost\r\n${Object.entries({ ...headers, 'mcp-name': 'slow_tool' }).map(([k, v]) => `${k}: ${v}\r\n`).join('')}Content-Length: ${Buffer.byteLength(quiet)}\r\n\r\n${quiet}`)
  await waitUntil(() => runtime.server.activeCalls().some(call => call.tool === 'slow_tool'), 'the 60 s call to run')
  early.destroy()
  await waitUntil(() => runtime.server.activeCalls().length === 0, 'the call to be cancelled')
  await waitUntil(() => app.mcpStats().inflight === 0, 'the POST to be done with')
})

const CALLS: Array<{ name: string, arguments: Record<string, unknown> }> = [
  { name: 'list_directory', arguments: {} },
  { name: 'find_files', arguments: { patterns: ['**/*.ts'] } },
  { name: 'search_regex', arguments: { pattern: 'hello' } },
  { name: 'read_files', arguments: { files: [{ path: 'src/app.ts' }] } },
  { name: 'get_file_info', arguments: { paths: ['README.md'] } },
  { name: 'get_symbols', arguments: { paths: ['src/app.ts'] } },
  { name: 'find_symbol', arguments: { name: 'hello' } },
  { name: 'search_code', arguments: { query: 'hello' } },
  { name: 'find_references', arguments: { name: 'hello' } },
  { name: 'get_call_graph', arguments: { name: 'hello' } },
  { name: 'get_repo_map', arguments: {} },
  { name: 'get_workspace_info', arguments: {} },
  { name: 'get_tool_usage_guide', arguments: { tool_names: ['read_files'] } }
]

t.test('the SDK v2 client, negotiating and pinned to 2026-07-28, calls every product tool over stdio and HTTP', async (t) => {
  const http = await httpInProcess(t, ['--root', root])
  for (const mode of ['auto', { pin: '2026-07-28' }] as const) {
    for (const transport of ['stdio', 'http'] as const) {
      const client = new Client({ name: 'v2', version: '1.0.0' }, { versionNegotiation: { mode } })
      await client.connect(transport === 'stdio'
        ? (await stdioInProcess(t, ['--root', root])).transport()
        : new StreamableHTTPClientTransport(new URL(http.url)))
      const label = `${typeof mode === 'string' ? mode : 'pinned'} over ${transport}`
      t.equal(client.getNegotiatedProtocolVersion?.(), '2026-07-28', `${label}: 2026-07-28`)
      const { tools } = await client.listTools()
      t.same(tools.map(tool => tool.name).sort(), CALLS.map(c => c.name).sort(), `${label}: every product tool listed`)
      for (const call of CALLS) {
        const result = await client.callTool(call)
        t.notOk(result.isError, `${label}: ${call.name}`, { result })
      }
      await client.close()
    }
  }
})

t.test('Mcp-Param-* headers reach the check over HTTP, read only for a tool that declares header parameters', async (t) => {
  const { app } = await buildTestApp(t, { tools: [...testTools, byRegionTool] })
  const call = async (name: string, args: Record<string, unknown>, extra: Record<string, string> = {}): Promise<number> => (await app.inject({
    method: 'POST',
    url: '/mcp',
    headers: { ...HEADERS, 'mcp-method': 'tools/call', 'mcp-name': name, ...extra },
    payload: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args, _meta: META } })
  })).statusCode
  t.equal(await call('by_region', { region: 'eu' }, { 'mcp-param-region': 'eu' }), 200)
  t.equal(await call('by_region', { region: 'eu' }, { 'mcp-param-region': 'us' }), 400, 'a header that disagrees with the body')
  t.equal(await call('by_region', { region: 'eu' }), 400, 'a header parameter without its header')
  t.equal(await call('echo_text', { text: 'hi' }, { 'mcp-param-region': 'anything' }), 200, 'a tool without header parameters never reads them')
})

t.test('2026-07-28: a tool this configuration leaves out says why, over stdio and HTTP', async (t) => {
  const args = ['--root', root, '--code-index', 'off']
  const http = await httpInProcess(t, args)
  for (const transport of ['stdio', 'http'] as const) {
    const client = new Client({ name: 'v2', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } })
    await client.connect(transport === 'stdio' ? (await stdioInProcess(t, args)).transport() : new StreamableHTTPClientTransport(new URL(http.url)))
    t.teardown(() => client.close())
    const result = await client.callTool({ name: 'search_code', arguments: { query: 'hello' } })
    t.match(result, { isError: true, content: [{ type: 'text', text: /^ERROR CODE_INDEX_OFF: search_code is not offered by this server/ }] }, transport)
  }
})
