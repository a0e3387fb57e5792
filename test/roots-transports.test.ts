import { pathToFileURL } from 'node:url'
import t, { type Test } from 'tap'
import { indexReady } from './helpers/rpc.js'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { ListRootsRequestSchema } from '@modelcontextprotocol/sdk/types.js'
import { httpInProcess, stdioInProcess } from './helpers/in-process.js'
import { waitUntil } from './helpers/wait.js'
import { CANARY, threeRoots } from './helpers/roots.js'

// Several roots over both real transports (stdio framing over streams, HTTP on a port; an SDK client): the same answers with root
// prefixes, and a client's roots (roots/list, asked again after list_changed) narrowing its session alike.

type Result = Awaited<ReturnType<Client['callTool']>>
const textOf = (result: Result): string => (result.content as Array<{ text: string }>)[0].text

async function clients (t: Test, args: string[], roots?: () => Array<{ uri: string }>): Promise<Client[]> {
  const made: Client[] = []
  // Registered first so it runs first: a client with roots keeps a GET stream open, which the server's close waits for.
  t.teardown(async () => { await Promise.all(made.map(async client => await client.close())) })
  const http = await httpInProcess(t, args)
  const stdio = await stdioInProcess(t, args)
  for (const transport of [stdio.transport(), new StreamableHTTPClientTransport(new URL(http.url))]) {
    const client = new Client({ name: 'roots', version: '1.0.0' }, roots === undefined ? {} : { capabilities: { roots: { listChanged: true } } })
    if (roots !== undefined) client.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: roots() }))
    made.push(client)
    await client.connect(transport)
  }
  return made
}

const CALLS = [
  { name: 'list_directory', arguments: { depth: 2 } },
  { name: 'find_files', arguments: { patterns: ['*.md'] } },
  { name: 'search_regex', arguments: { pattern: 'needle' } },
  { name: 'read_files', arguments: { files: [{ path: 'docs:README.md' }, { path: 'wiki:x' }, { path: 'docs:to-secret' }] } },
  { name: 'git_log', arguments: { path: 'docs:' } },
  { name: 'get_workspace_info', arguments: {} }
]

t.test('three roots: stdio and HTTP give the same prefixed answers, and nothing from beside the roots', async (t) => {
  const { app, docs, plain } = await threeRoots(t)
  const [stdio, http] = await clients(t, ['--root', app, '--root', `docs=${docs}`, '--root', plain])
  await Promise.all([indexReady(stdio), indexReady(http)])
  for (const call of CALLS) {
    const [a, b] = await Promise.all([stdio.callTool(call), http.callTool(call)])
    // The two servers share one index file: which of them scanned, and when, is theirs to differ on.
    // One of them holds the lease and writes it; the other says it reads what that one writes.
    const indexState = (text: string): string => text.replace(/(## Code index \(find_symbol, search_code\)\n- ).*/, '$1<status>').replace(/\n- written by another server .*/, '')
    t.equal(indexState(textOf(a)), indexState(textOf(b)), `${call.name} ${JSON.stringify(call.arguments)}`)
    t.notMatch(JSON.stringify(a), CANARY)
  }
  const symbols = await Promise.all([stdio, http].map(async client => textOf(await client.callTool({ name: 'find_symbol', arguments: { name: 'retryFailedUpload' } }))))
  for (const text of symbols) t.match(text, /\napp:src\/upload\.ts:1 function retryFailedUpload: export function retryFailedUpload \(\) \{ return "needle" \}\n/, 'the index covers every root, with prefixed paths')
  const search = await stdio.callTool(CALLS[2])
  t.same(textOf(search).match(/^## .*$/gm), ['## app:src/upload.ts', '## docs:guide/intro.md', '## plain:notes.txt'])
  t.match(textOf(await http.callTool(CALLS[4])), /^# History of docs: from [0-9a-f]{12} \(HEAD\)\n\n[0-9a-f]{12} \d{4}-\d{2}-\d{2} Alice — Start the docs/)
})

t.test('a client\'s roots narrow its session on both transports, and again after roots/list_changed', async (t) => {
  const { app, docs, plain } = await threeRoots(t)
  let roots = [{ uri: pathToFileURL(docs).href }]
  const both = await clients(t, ['--root', app, '--root', `docs=${docs}`, '--root', plain], () => roots)
  for (const client of both) {
    const listed = await client.callTool({ name: 'list_directory', arguments: {} })
    t.same((listed.structuredContent as { entries?: unknown }).entries, ['guide/', 'README.md', 'to-app', 'to-secret'], 'docs alone')
    t.match(textOf(await client.callTool({ name: 'read_files', arguments: { files: [{ path: `${app}/README.md` }] } })), /ERROR PATH_OUTSIDE_ROOT/, 'another root is outside now')
  }
  roots = [{ uri: pathToFileURL(plain).href }, { uri: pathToFileURL(`${app}/src`).href }]
  for (const client of both) {
    await client.sendRootsListChanged()
    // The notification and the next call travel separately over HTTP: ask until the new roots show.
    let entries: unknown
    await waitUntil(async () => {
      entries = ((await client.callTool({ name: 'list_directory', arguments: {} })).structuredContent as { entries?: unknown }).entries
      return JSON.stringify(entries) === JSON.stringify(['app:/', 'plain:/'])
    }, 'the new roots to show')
    t.same(entries, ['app:/', 'plain:/'], 'plain, and app narrowed to its src folder')
    t.match(textOf(await client.callTool({ name: 'read_files', arguments: { files: [{ path: 'app:upload.ts' }] } })), /### app:upload\.ts — lines 1–1 of 1/)
  }
})
