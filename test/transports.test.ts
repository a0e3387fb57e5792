import t, { type Test } from 'tap'
import { indexReady } from './helpers/rpc.js'
import { createHash } from 'node:crypto'
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import { httpInProcess, stdioInProcess } from './helpers/in-process.js'
import { waitUntil } from './helpers/wait.js'
import { commitAll } from './helpers/git-repo.js'
import { makePdf, makePng } from './helpers/documents.js'
import { startFakeEmbeddings } from './helpers/fake-embeddings.js'

// The parity test, in-process: the same engine over stdio (its framing over streams) and over Streamable HTTP
// (Fastify on a real port) must publish identical
// bytes for initialize, every tools/list page, resources, prompts and a set of tool calls.

const GOLDEN = new URL('./golden/tools-list.json', import.meta.url)

const root = mkdtempSync(join(tmpdir(), 'wmcp-parity-'))
mkdirSync(join(root, 'src'))
writeFileSync(join(root, 'README.md'), '# Parity\n\nHello parity world.\n')
writeFileSync(join(root, 'src', 'app.ts'), 'export function hello () {\n  return "hello"\n}\n')
writeFileSync(join(root, 'src', 'util.ts'), '// util\nexport const answer = 42\n')
writeFileSync(join(root, '.gitignore'), 'ignored.txt\n')
writeFileSync(join(root, 'ignored.txt'), 'ignored\n')
writeFileSync(join(root, 'shot.png'), makePng(64, 48))
writeFileSync(join(root, 'spec.pdf'), makePdf(['Parity PDF', 'second page']))
writeFileSync(join(root, 'legacy.txt'), Buffer.from('caf\xe9 cr\xe8me\n', 'latin1'))
commitAll(root, 'Parity fixture')
writeFileSync(join(root, 'src', 'util.ts'), '// util\nexport const answer = 43\n')

/** JSON with sorted keys, so equal objects give equal text. */
function canonical (value: unknown): string {
  return JSON.stringify(value, (_key, v) => {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return v
    return Object.fromEntries(Object.keys(v).sort().map(k => [k, v[k]]))
  })
}

/** Fields that legitimately differ between two runs (clock readings), masked before comparing. */
function stable (value: unknown): unknown {
  return JSON.parse(JSON.stringify(value)
    .replace(/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z/g, '<time>')
    .replace(/"(generation_time_ms|duration_ms|elapsed_ms)":[\d.]+/g, '"$1":0')
    .replace(/(generated in |took )[\d.]+ ?ms/g, '$1<n> ms')
    // Both servers share one index file: which of them scanned, and for how long, is theirs to differ on.
    .replace(/"code_index":\{[^}]*\}/g, '"code_index":"<status>"')
    .replace(/(## Code index \(find_symbol, search_code\)\\n- )[^\\]*/g, '$1<status>')
    // One of them holds the index's lease and writes it; the other says it reads what that one writes.
    .replace(/\\n- written by another server [^\\]*/g, '')
    .replace(/"embeddings":\{[^}]*\}/g, '"embeddings":"<status>"')
    .replace(/(- semantic search \(search_semantic\): )[^\\]*/g, '$1<status>'))
}

const CALLS: Array<{ name: string, arguments: Record<string, unknown> }> = [
  { name: 'list_directory', arguments: {} },
  { name: 'list_directory', arguments: { path: 'src', page_size: 1 } },
  { name: 'find_files', arguments: { patterns: ['**/*.ts'] } },
  { name: 'search_regex', arguments: { pattern: 'hello', context_lines: 1 } },
  { name: 'search_regex', arguments: { pattern: '(unclosed' } },
  { name: 'read_files', arguments: { files: [{ path: 'src/app.ts' }, { path: 'README.md', start_line: 2 }] } },
  { name: 'read_files', arguments: { files: [{ path: '../outside.txt' }] } },
  { name: 'get_file_info', arguments: { paths: ['src/app.ts', 'ignored.txt', 'missing.txt'] } },
  { name: 'get_symbols', arguments: { paths: ['src/app.ts', 'src/util.ts', 'README.md'] } },
  { name: 'find_symbol', arguments: { name: 'hello' } },
  { name: 'search_code', arguments: { query: 'hello answer' } },
  { name: 'get_workspace_info', arguments: {} },
  { name: 'read_files', arguments: { files: [{ path: 'shot.png' }, { path: 'spec.pdf', pages: '2' }, { path: 'legacy.txt' }] } },
  { name: 'git_log', arguments: {} },
  { name: 'git_show', arguments: { path: 'src' } },
  { name: 'git_diff', arguments: {} },
  { name: 'git_blame', arguments: { path: 'src/app.ts' } },
  { name: 'git_log', arguments: { ref: '--output=/tmp/x' } },
  { name: 'get_tool_usage_guide', arguments: { tool_names: ['read_files', 'nonexistent'] } },
  { name: 'list_directory', arguments: { depth: 99 } },
  { name: 'list_directory', arguments: { workspace: '/' } }
]

async function connect (t: Test, transport: Transport): Promise<Client> {
  const client = new Client({ name: 'parity', version: '1.0.0' })
  await client.connect(transport)
  t.teardown(() => client.close())
  return client
}

async function allToolPages (client: Client): Promise<unknown[]> {
  const pages: unknown[] = []
  let cursor: string | undefined
  do {
    const page = await client.listTools(cursor === undefined ? {} : { cursor })
    pages.push(page)
    cursor = page.nextCursor
  } while (cursor !== undefined && pages.length < 50)
  return pages
}

t.test('stdio and HTTP serve identical initialize, tools/list, resources, prompts and tool results', async (t) => {
  const http = await httpInProcess(t, ['--root', root])
  const overHttp = await connect(t, new StreamableHTTPClientTransport(new URL(http.url)))
  const overStdio = await connect(t, (await stdioInProcess(t, ['--root', root])).transport())

  t.equal(canonical(overHttp.getServerVersion()), canonical(overStdio.getServerVersion()), 'serverInfo')
  t.equal(canonical(overHttp.getServerCapabilities()), canonical(overStdio.getServerCapabilities()), 'capabilities')
  t.equal(overHttp.getInstructions(), overStdio.getInstructions(), 'instructions')
  t.ok((overHttp.getInstructions() ?? '').length > 0, 'instructions are not empty')

  const httpPages = await allToolPages(overHttp)
  const stdioPages = await allToolPages(overStdio)
  await Promise.all([indexReady(overHttp), indexReady(overStdio)])
  t.equal(canonical(httpPages), canonical(stdioPages), 'every tools/list page')

  const caps = overHttp.getServerCapabilities() ?? {}
  if (caps.resources !== undefined) {
    t.equal(canonical(await overHttp.listResources()), canonical(await overStdio.listResources()), 'resources/list')
    t.equal(canonical(await overHttp.listResourceTemplates()), canonical(await overStdio.listResourceTemplates()), 'resources/templates/list')
  }
  if (caps.prompts !== undefined) {
    t.equal(canonical(await overHttp.listPrompts()), canonical(await overStdio.listPrompts()), 'prompts/list')
  }

  const listed = new Set(httpPages.flatMap(p => (p as { tools: Array<{ name: string }> }).tools.map(tool => tool.name)))
  for (const call of CALLS) {
    t.ok(listed.has(call.name), `${call.name} is listed`)
    const [a, b] = await Promise.all([overHttp.callTool(call), overStdio.callTool(call)])
    t.equal(canonical(stable(a)), canonical(stable(b)), `tools/call ${call.name} ${JSON.stringify(call.arguments)}`)
    if (call.name === 'find_symbol') t.match((a.content as Array<{ text: string }>)[0].text, /\nsrc\/app\.ts:1-3 function hello: export function hello \(\)\n/, 'the index answers over both')
    if (call.name === 'search_code') t.match((a.content as Array<{ text: string }>)[0].text, /\n## src\/app\.ts:1-3 function hello\n1\texport function hello \(\) \{\n/, 'ranked search over both')
    if (call.name === 'get_symbols') t.match((a.content as Array<{ text: string }>)[0].text, /\n1-3 function hello: export function hello \(\)\n## src\/util\.ts — TypeScript, 1 symbol\n2 constant answer: export const answer = 43\n## README\.md — ERROR UNSUPPORTED_LANGUAGE/, 'outlined over both')
  }
})

t.test('unknown tools are the same JSON-RPC error (-32602) on both transports', async (t) => {
  const http = await httpInProcess(t, ['--root', root])
  const overHttp = await connect(t, new StreamableHTTPClientTransport(new URL(http.url)))
  const overStdio = await connect(t, (await stdioInProcess(t, ['--root', root])).transport())

  const [a, b] = await Promise.allSettled([
    overHttp.callTool({ name: 'no_such_tool', arguments: {} }),
    overStdio.callTool({ name: 'no_such_tool', arguments: {} })
  ])

  t.match(a, { status: 'rejected', reason: { code: -32602 } })
  t.match(b, { status: 'rejected', reason: { code: -32602 } })
  t.equal((a as PromiseRejectedResult).reason.message, (b as PromiseRejectedResult).reason.message)

  // A tool this configuration does not offer, that a client may remember from another: a tool error it can act on.
  const [c, d] = await Promise.all([overHttp, overStdio].map(async client => await client.callTool({ name: 'search_semantic', arguments: { query: 'hello' } })))
  t.equal(canonical(c), canonical(d))
  t.match(c, { isError: true, content: [{ type: 'text', text: /^ERROR EMBEDDINGS_NOT_CONFIGURED: search_semantic is not offered by this server: it needs an embeddings provider \(--embeddings-url and --embeddings-model\) and the code index\. Hint: search_code query=/ }] })
})

t.test('with an embeddings provider, search_semantic is listed and answers alike over both transports', async (t) => {
  const fake = await startFakeEmbeddings()
  t.teardown(() => fake.close())
  const env = { WORKSPACE_MCP_EMBEDDINGS_URL: `${fake.url}/v1`, WORKSPACE_MCP_EMBEDDINGS_MODEL: 'fake' }
  const http = await httpInProcess(t, ['--root', root], env)
  const overHttp = await connect(t, new StreamableHTTPClientTransport(new URL(http.url)))
  const overStdio = await connect(t, (await stdioInProcess(t, ['--root', root], env)).transport())
  const [httpPages, stdioPages] = await Promise.all([allToolPages(overHttp), allToolPages(overStdio)])
  t.equal(canonical(httpPages), canonical(stdioPages), 'every tools/list page')
  t.ok((httpPages[0] as { tools: Array<{ name: string }> }).tools.some(tool => tool.name === 'search_semantic'), 'listed')
  for (const client of [overHttp, overStdio]) {
    // Each server embeds in the background; the answers are compared once both hold every vector.
    await waitUntil(async () => {
      const info = (await client.callTool({ name: 'get_workspace_info', arguments: {} })).structuredContent as { code_index?: { chunks: number }, embeddings?: { state: string, vectors: number } }
      return info.embeddings?.state === 'ready' && info.embeddings.vectors === info.code_index?.chunks
    }, 'every chunk to have its vector', 60_000, 100)
  }
  const call = { name: 'search_semantic', arguments: { query: 'hello world function' } }
  const [a, b] = await Promise.all([overHttp.callTool(call), overStdio.callTool(call)])
  t.equal(canonical(stable(a)), canonical(stable(b)))
  t.match((a.content as Array<{ text: string }>)[0].text, /^# Code about "hello world function", best first — by meaning \(fake\) and by words, fused\n## src\/app\.ts:1-3 function hello \(similarity 0\.\d\d\)\n/)
  t.ok(fake.requests.length > 0, 'the provider was asked')
})

/** Reads one JSON-RPC message from an HTTP response that is JSON or SSE. */
async function rawBody (res: Response): Promise<string> {
  const text = await res.text()
  if (!(res.headers.get('content-type') ?? '').includes('text/event-stream')) return text
  const data = text.split('\n').filter(l => l.startsWith('data: ')).map(l => l.slice(6))
  return data.find(d => d.includes('"result"') || d.includes('"error"')) ?? ''
}

t.test('the tools/list bytes are identical on the wire, and match the reviewed golden manifest', async (t) => {
  const http = await httpInProcess(t, ['--root', root])
  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }
  const init = await fetch(http.url, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }) })
  await rawBody(init)
  const session = init.headers.get('mcp-session-id')
  const sessionHeaders: Record<string, string> = session === null ? headers : { ...headers, 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' }
  await fetch(http.url, { method: 'POST', headers: sessionHeaders, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) })
  const httpList = await rawBody(await fetch(http.url, { method: 'POST', headers: sessionHeaders, body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }) }))

  const proc = await stdioInProcess(t, ['--root', root])
  proc.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } })
  await proc.response(1)
  proc.send({ jsonrpc: '2.0', id: 2, method: 'tools/list' })
  await proc.response(2)
  const stdioList = proc.stdout.find(line => line.startsWith('{"jsonrpc":"2.0","id":2,'))

  t.ok(httpList.length > 100)
  t.equal(httpList, stdioList, 'byte-identical tools/list response')

  const manifest = JSON.stringify(JSON.parse(httpList).result, null, 2) + '\n'
  if (process.env.UPDATE_GOLDEN === '1') {
    mkdirSync(new URL('./golden/', import.meta.url), { recursive: true })
    writeFileSync(GOLDEN, manifest)
  }
  const golden = readFileSync(GOLDEN, 'utf8')
  t.equal(manifest, golden, 'tools/list differs from test/golden/tools-list.json: review the schema change, then run npm run golden')
})

t.test('a tool this configuration leaves out says why over both transports; a mistyped name gets a did-you-mean', async (t) => {
  const args = ['--root', root, '--code-index', 'off']
  const http = await httpInProcess(t, args)
  const clients = [
    await connect(t, new StreamableHTTPClientTransport(new URL(http.url))),
    await connect(t, (await stdioInProcess(t, args)).transport())
  ]
  const [a, b] = await Promise.all(clients.map(async client => await client.callTool({ name: 'find_symbol', arguments: { name: 'hello' } })))
  t.equal(canonical(a), canonical(b))
  t.match(a, { isError: true, content: [{ type: 'text', text: /^ERROR CODE_INDEX_OFF: find_symbol is not offered by this server: the code index is turned off/ }] })

  const typos = await Promise.allSettled(clients.map(async client => await client.callTool({ name: 'read_file', arguments: {} })))
  for (const typo of typos) t.match(typo, { status: 'rejected', reason: { code: -32602, message: /Unknown tool: read_file \(did you mean read_files\?\)/ } })
})

t.test('a token-protected server: the SDK client sends its token in requestInit.headers; without one it learns what to send', async (t) => {
  const token = 'transport-token-0123456789'
  const env = { WORKSPACE_MCP_AUTH_TOKENS: `me:${createHash('sha256').update(token).digest('hex')}` }
  const http = await httpInProcess(t, ['--root', root], env)

  const withToken = await connect(t, new StreamableHTTPClientTransport(new URL(http.url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }))
  t.ok((await withToken.listTools()).tools.some(tool => tool.name === 'read_files'), 'served')

  const anonymous = new Client({ name: 'anonymous', version: '1.0.0' })
  const refused = await anonymous.connect(new StreamableHTTPClientTransport(new URL(http.url))).then(() => undefined, (err: unknown) => err)
  t.match(refused, { message: /401|Unauthorized/ }, 'refused')
  const raw = await fetch(http.url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }) })
  t.equal(raw.status, 401)
  t.match(await raw.json(), { error: { message: /send "Authorization: Bearer <token>" with a token the operator gave you/ } })
})
