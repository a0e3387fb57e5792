import t, { type Test } from 'tap'
import { renameSync } from 'node:fs'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { httpInProcess, stdioInProcess } from '../helpers/in-process.js'
import { createHostileWorkspace, type HostileWorkspace } from '../helpers/workspace-fixture.js'
import { startFakeEmbeddings, type FakeEmbeddings } from '../helpers/fake-embeddings.js'
import { waitUntil } from '../helpers/wait.js'

// The canary battery: every hostile path through every workspace tool, resource and prompt, over both
// real transports (in this process). The rule is "no fact about anything outside the root": the secret
// stored outside never appears, no absolute path outside the root appears, and every answer is
// byte-identical whether the outside targets exist or not (the battery runs twice, the outside tree
// moved away in between, and the answers are compared pairwise).

/** Every path trick of the fixture: lexical escapes, absolute paths, escaping links, loops, specials. */
function hostilePaths (fx: HostileWorkspace): string[] {
  return [
    '..', '../outside', '../outside/secret.txt', 'src/../../outside/secret.txt', '../root-evil/secret.txt',
    `${fx.outside}/secret.txt`, `${fx.base}/root-evil/secret.txt`, `${fx.root}-evil/secret.txt`, `file://${fx.outside}/secret.txt`,
    'link-to-secret', 'link-abs-secret', 'link-to-outside-dir', 'link-to-outside-dir/secret.txt', 'link-to-outside-dir/dir/inner.txt',
    'link-to-outside-dir/missing.txt', 'link-to-evil', 'link-to-evil/secret.txt', 'loop-a', 'loopdir/up', 'loopdir/up/link-to-secret',
    'link-dangling', 'fifo', '%2e%2e/outside/secret.txt', '..\\outside\\secret.txt', 'src/\u0000/../../outside', '~/../outside/secret.txt',
    // The server's own \xHH name syntax, spelling '.', '/' and NUL (the reported escape defect), and missing twins.
    '\\x2e\\x2e\\x2foutside\\x2fsecret.txt', '\\x2e\\x2e\\x2f\\x2e\\x2e\\x2f\\x2e\\x2e\\x2fetc\\x2fpasswd', '..\\x2foutside',
    'link-to-outside-dir\\x2fsecret.txt', 'link-abs-secret\\x2f..', 'src\\x00', 'link-to-outside-dir/nope/deeper.txt',
    'link-to-outside-dir/secret.txt/child', 'link-to-outside-dir/dir', 'fake\\x0a### injected.txt'
  ]
}

function chunks<T> (items: T[], size: number): T[][] {
  const out: T[][] = []
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size))
  return out
}

/** The calls of the battery (arguments a tool rejects are fine: the answer is still checked). */
function battery (fx: HostileWorkspace): Array<{ name: string, arguments: Record<string, unknown> }> {
  const paths = hostilePaths(fx)
  const calls: Array<{ name: string, arguments: Record<string, unknown> }> = [
    { name: 'list_directory', arguments: { path: '.', depth: 5, include_hidden: true, respect_gitignore: false, page_size: 1000 } },
    { name: 'find_files', arguments: { patterns: ['**/*', '*secret*'], include_hidden: true, respect_gitignore: false, page_size: 1000 } },
    { name: 'search_regex', arguments: { pattern: 'CANARY-[0-9a-f-]+' } },
    { name: 'search_regex', arguments: { pattern: 'top secret', literal: true, include: ['**/*'] } },
    { name: 'search_regex', arguments: { pattern: 'secret|CANARY', output_mode: 'files' } },
    { name: 'get_workspace_info', arguments: {} },
    { name: 'search_code', arguments: { query: 'top secret canary inner evil' } },
    { name: 'find_symbol', arguments: { name: 'secret', match: 'substring' } },
    { name: 'find_references', arguments: { name: 'secret' } },
    { name: 'get_call_graph', arguments: { name: 'secret', depth: 3 } },
    { name: 'get_repo_map', arguments: { max_response_tokens: 20000 } },
    { name: 'search_semantic', arguments: { query: 'top secret canary inner evil', page_size: 50 } }
  ]
  for (const group of chunks(paths, 20)) {
    calls.push({ name: 'read_files', arguments: { files: group.map(path => ({ path })) } })
    calls.push({ name: 'read_files', arguments: { files: group.map(path => ({ path, start_line: -5 })) } })
    calls.push({ name: 'get_symbols', arguments: { paths: group } })
  }
  calls.push({ name: 'get_file_info', arguments: { paths } })
  for (const path of paths) {
    calls.push({ name: 'list_directory', arguments: { path, depth: 5, include_hidden: true, respect_gitignore: false } })
    calls.push({ name: 'find_files', arguments: { patterns: ['**/*'], path, include_hidden: true, respect_gitignore: false } })
    calls.push({ name: 'search_regex', arguments: { pattern: 'CANARY', path } })
    calls.push({ name: 'find_symbol', arguments: { name: 'secret', match: 'substring', path } })
    calls.push({ name: 'find_references', arguments: { name: 'secret', path } })
    calls.push({ name: 'find_references', arguments: { name: 'secret', definition: path } })
    calls.push({ name: 'get_call_graph', arguments: { name: 'secret', path, definition: path } })
    calls.push({ name: 'get_repo_map', arguments: { path } })
    calls.push({ name: 'search_semantic', arguments: { query: 'secret canary', path } })
  }
  return calls
}

/** Masks what legitimately changes between two runs (clock readings, cache markers). */
function stable (text: string): string {
  return text
    .replace(/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z/g, '<time>')
    .replace(/"(generation_time_ms|duration_ms|elapsed_ms|uptime_s)":[\d.]+/g, '"$1":0')
    .replace(/(generated in |took |in )[\d.]+ ?ms/g, '$1<n> ms')
    .replace(/"cached":(true|false)/g, '"cached":<x>')
    .replace(/ \(cached\)/g, '')
    // The code index's own state (counts of a rescan, its duration) is no fact about the outside.
    .replace(/"code_index":\{[^}]*\}/g, '"code_index":"<status>"')
    .replace(/(## Code index \(find_symbol, search_code\)\\n- )[^\\]*/g, '$1<status>')
    .replace(/"embeddings":\{[^}]*\}/g, '"embeddings":"<status>"')
    .replace(/(- semantic search \(search_semantic\): )[^\\]*/g, '$1<status>')
}

/** Waits until the code index has finished its first scan and every chunk has a vector, so both batteries ask the same index. */
async function indexReady (client: Client): Promise<void> {
  await waitUntil(async () => {
    const info = (await client.callTool({ name: 'get_workspace_info', arguments: {} })).structuredContent as { code_index?: { state: string, chunks: number }, embeddings?: { state: string, vectors: number } }
    return info.code_index?.state !== 'building' && info.embeddings?.state === 'ready' && info.embeddings.vectors === info.code_index?.chunks
  }, 'the code index and its vectors', 60_000, 100)
}

/** A fake embeddings provider for the server: its environment, and the check that nothing from outside the root reached it. */
async function provider (t: Test, fx: HostileWorkspace): Promise<{ env: Record<string, string>, check: () => void }> {
  const fake: FakeEmbeddings = await startFakeEmbeddings()
  t.teardown(() => fake.close())
  return {
    env: { WORKSPACE_MCP_EMBEDDINGS_URL: `${fake.url}/v1`, WORKSPACE_MCP_EMBEDDINGS_MODEL: 'fake' },
    check () {
      t.ok(fake.requests.length > 0, 'the provider was asked')
      t.notOk(fake.requests.some(r => r.inputs.some(input => input.includes(fx.canary))), 'no text from outside the root was sent to the embeddings provider')
    }
  }
}

/** Runs every call of the battery plus resources and prompts; returns each answer's text, checked for leaks. */
async function runBattery (t: Test, client: Client, fx: HostileWorkspace): Promise<Map<string, string>> {
  const { tools } = await client.listTools()
  const names = new Set(tools.map(tool => tool.name))
  const answers = new Map<string, string>()
  const codes = new Set<string>()
  const perTool = new Map<string, number>()
  const check = (key: string, text: string): void => {
    answers.set(key, stable(text))
    for (const m of text.matchAll(/ERROR ([A-Z_]+)/g)) codes.add(m[1])
    if (text.includes(fx.canary)) t.fail(`${key} leaked the canary`)
    if (text.includes(fx.outside) || text.includes(`${fx.base}/root-evil`)) t.fail(`${key} revealed an absolute path outside the root`)
  }
  for (const call of battery(fx)) {
    if (!names.has(call.name)) continue
    const result = await client.callTool(call)
    const args = call.arguments as { files?: unknown[], paths?: unknown[] }
    perTool.set(call.name, (perTool.get(call.name) ?? 0) + (args.files?.length ?? args.paths?.length ?? 1))
    check(`${call.name} ${JSON.stringify(call.arguments)}`, JSON.stringify(result))
  }
  for (const resource of (await client.listResources()).resources) check(`resources/read ${resource.uri}`, JSON.stringify(await client.readResource({ uri: resource.uri })))
  for (const prompt of (await client.listPrompts()).prompts) {
    // A prompt echoes its arguments: only relative spellings, so an echo is never mistaken for a fact.
    for (const path of hostilePaths(fx).filter(p => !p.includes(fx.base)).slice(0, 8)) {
      const args = Object.fromEntries((prompt.arguments ?? []).map(a => [a.name, path]))
      const got = await client.getPrompt({ name: prompt.name, arguments: args }).then(r => JSON.stringify(r), (err: Error) => `error ${err.message}`)
      perTool.set(`prompt ${prompt.name}`, (perTool.get(`prompt ${prompt.name}`) ?? 0) + 1)
      check(`prompts/get ${prompt.name} ${path}`, got)
    }
  }
  t.ok(answers.size > 50, `${answers.size} hostile calls answered without a leak`)
  t.comment(`hostile inputs per tool: ${[...perTool].map(([name, n]) => `${name} ${n}`).join(', ')}`)
  for (const code of ['PATH_OUTSIDE_ROOT', 'SYMLINK_ESCAPES_ROOT', 'INVALID_PATH', 'PATH_NOT_FOUND']) t.ok(codes.has(code), `the battery reached ${code}`)
  return answers
}

/** The battery twice — outside targets present, then moved away — and every answer compared pairwise. */
async function noFactAboutOutside (t: Test, client: Client, fx: HostileWorkspace): Promise<void> {
  await indexReady(client)
  const present = await runBattery(t, client, fx)
  const moved = [`${fx.outside}`, `${fx.base}/root-evil`]
  for (const dir of moved) renameSync(dir, `${dir}-moved-away`)
  let absent: Map<string, string>
  try {
    absent = await runBattery(t, client, fx)
  } finally {
    for (const dir of moved) renameSync(`${dir}-moved-away`, dir)
  }
  let differing = 0
  for (const [key, text] of present) {
    if (absent.get(key) === text) continue
    differing++
    t.fail(`answer depends on whether the outside exists: ${key}`, { present: text.slice(0, 600), absent: absent.get(key)?.slice(0, 600) })
  }
  t.equal(differing, 0, `${present.size} answers identical with the outside present and absent`)
}

t.test('no hostile call leaks the canary over stdio', async (t) => {
  const fx = createHostileWorkspace(t, { big: false })
  const client = new Client({ name: 'canary', version: '1.0.0' })
  const embeddings = await provider(t, fx)
  await client.connect((await stdioInProcess(t, ['--root', fx.root, '--log-level', 'silent'], embeddings.env)).transport())
  t.teardown(() => client.close())

  await noFactAboutOutside(t, client, fx)
  embeddings.check()
})

t.test('no hostile call leaks the canary over Streamable HTTP', async (t) => {
  const fx = createHostileWorkspace(t, { big: false })
  const embeddings = await provider(t, fx)
  const { url } = await httpInProcess(t, ['--root', fx.root], embeddings.env)
  const client = new Client({ name: 'canary', version: '1.0.0' })
  await client.connect(new StreamableHTTPClientTransport(new URL(url)))
  t.teardown(() => client.close())

  await noFactAboutOutside(t, client, fx)
  embeddings.check()
})
