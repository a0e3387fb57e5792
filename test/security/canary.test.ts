import t, { type Test } from 'tap'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { CLI } from '../helpers/spawn-stdio.js'
import { spawnHttp } from '../helpers/spawn-http.js'
import { createHostileWorkspace, type HostileWorkspace } from '../helpers/workspace-fixture.js'

// The canary battery: every hostile path through every workspace tool, over both real transports
// (the built bin), and the secret stored outside the root must never appear in any response, nor
// any absolute path outside the root.

/** Every path trick of the fixture: lexical escapes, absolute paths, escaping links, loops, specials. */
function hostilePaths (fx: HostileWorkspace): string[] {
  return [
    '..', '../outside', '../outside/secret.txt', 'src/../../outside/secret.txt', '../root-evil/secret.txt',
    `${fx.outside}/secret.txt`, `${fx.base}/root-evil/secret.txt`, `${fx.root}-evil/secret.txt`, `file://${fx.outside}/secret.txt`,
    'link-to-secret', 'link-abs-secret', 'link-to-outside-dir', 'link-to-outside-dir/secret.txt', 'link-to-outside-dir/dir/inner.txt',
    'link-to-outside-dir/missing.txt', 'link-to-evil', 'link-to-evil/secret.txt', 'loop-a', 'loopdir/up', 'loopdir/up/link-to-secret',
    'link-dangling', 'fifo', '%2e%2e/outside/secret.txt', '..\\outside\\secret.txt', 'src/\u0000/../../outside', '~/../outside/secret.txt'
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
    { name: 'get_workspace_info', arguments: {} }
  ]
  for (const group of chunks(paths, 20)) {
    calls.push({ name: 'read_files', arguments: { files: group.map(path => ({ path })) } })
    calls.push({ name: 'read_files', arguments: { files: group.map(path => ({ path, start_line: -5 })) } })
  }
  calls.push({ name: 'get_file_info', arguments: { paths } })
  for (const path of paths) {
    calls.push({ name: 'list_directory', arguments: { path, depth: 5, include_hidden: true, respect_gitignore: false } })
    calls.push({ name: 'find_files', arguments: { patterns: ['**/*'], path, include_hidden: true, respect_gitignore: false } })
    calls.push({ name: 'search_regex', arguments: { pattern: 'CANARY', path } })
  }
  return calls
}

async function runBattery (t: Test, client: Client, fx: HostileWorkspace): Promise<void> {
  const { tools } = await client.listTools()
  const names = new Set(tools.map(tool => tool.name))
  let answered = 0
  const codes = new Set<string>()
  for (const call of battery(fx)) {
    if (!names.has(call.name)) continue
    const result = await client.callTool(call)
    const text = JSON.stringify(result)
    answered++
    for (const m of text.matchAll(/ERROR ([A-Z_]+)/g)) codes.add(m[1])
    if (text.includes(fx.canary)) t.fail(`${call.name} ${JSON.stringify(call.arguments)} leaked the canary`)
    if (text.includes(fx.outside) || text.includes(`${fx.base}/root-evil`)) t.fail(`${call.name} ${JSON.stringify(call.arguments)} revealed an absolute path outside the root`)
  }
  t.ok(answered > 50, `${answered} hostile calls answered without a leak`)
  for (const code of ['PATH_OUTSIDE_ROOT', 'SYMLINK_ESCAPES_ROOT', 'INVALID_PATH', 'PATH_NOT_FOUND']) t.ok(codes.has(code), `the battery reached ${code}`)
}

t.test('no hostile call leaks the canary over stdio', async (t) => {
  const fx = createHostileWorkspace(t, { big: false })
  const client = new Client({ name: 'canary', version: '1.0.0' })
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [CLI, 'stdio', '--root', fx.root, '--log-level', 'silent'], stderr: 'ignore' }))
  t.teardown(() => client.close())

  await runBattery(t, client, fx)
})

t.test('no hostile call leaks the canary over Streamable HTTP', async (t) => {
  const fx = createHostileWorkspace(t, { big: false })
  const { url } = await spawnHttp(t, ['--root', fx.root])
  const client = new Client({ name: 'canary', version: '1.0.0' })
  await client.connect(new StreamableHTTPClientTransport(new URL(url)))
  t.teardown(() => client.close())

  await runBattery(t, client, fx)
})
