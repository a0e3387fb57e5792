import t from 'tap'
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { Writable } from 'node:stream'
import { dirname, join } from 'node:path'
import { cacheFileOf } from '../../src/code-cache.js'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { BUNDLE, childEnv, cliCommand, COVERED_CLI, spawnStdio } from '../helpers/spawn-stdio.js'
import { reportingRg } from '../helpers/stand-in-rg.js'
import { waitUntil } from '../helpers/wait.js'
import { runCli } from '../helpers/cli.js'
import { stdoutLines } from '../helpers/rpc.js'
import { stdioCommandInProcess, stdioInProcess, testHost } from '../helpers/in-process.js'
import { serveStdioCommand } from '../../src/bin/stdio.js'

const root = mkdtempSync(join(tmpdir(), 'wmcp-stdio-'))
writeFileSync(join(root, 'hello.txt'), 'hello world\n')
const init = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } } }

t.test('the shipped bin: the SDK Client connects over stdio and lists every tool, started from the bundle\'s code cache, yaml never loaded', async (t) => {
  // A user's environment: tap's NODE_OPTIONS would be V8 flags the build's training run did not have.
  // NODE_DEBUG=module makes Node name every CommonJS load on stderr.
  const transport = new StdioClientTransport({ ...cliCommand(BUNDLE, ['stdio', '--root', root]), stderr: 'pipe', env: childEnv(BUNDLE, { NODE_OPTIONS: '', NODE_DEBUG: 'module' }) as Record<string, string> })
  let stderr = ''
  transport.stderr?.on('data', (chunk: Buffer) => { stderr += chunk.toString() })
  const client = new Client({ name: 'test', version: '1.0.0' })
  t.teardown(() => client.close())

  await client.connect(transport)
  const { tools } = await client.listTools()
  const printed = await runCli(['tools', '--json', '--root', root])
  const { prompts } = await client.listPrompts()
  const guide = await client.callTool({ name: 'get_tool_usage_guide', arguments: { tool_names: ['list_directory'] } }) as { content: Array<{ text: string }> }

  t.equal(client.getServerVersion()?.name, 'workspace-mcp')
  t.strictSame(tools, JSON.parse(printed.stdout), '`tools --json` prints what the shipped bin serves')
  const ready = stderr.split('\n').find(line => line.includes('stdio server ready')) ?? '{}'
  t.equal((JSON.parse(ready.slice(ready.indexOf('{'))) as { codeCache?: unknown }).codeCache, 'accepted', 'dist/bin/cli.js stdio ran stdio.cjs with its cache')
  // Accepted means V8 took it with the flags a user runs it with: a build on another Node, or other flags, would fail here.
  const bytes = statSync(cacheFileOf(join(dirname(BUNDLE), 'stdio.cjs'))).size
  t.ok(bytes > 100_000, `the cache holds the trained functions (${bytes} bytes)`)
  // The shipped YAML (templates, the docs overlay) is answered from the build's parse table: yaml loads only for a
  // document the package does not ship (test/bin/bundle.test.ts).
  t.ok(prompts.some(p => p.name === 'spec'), 'the built-in templates are listed')
  t.match(guide.content[0].text, /### list_directory(?=[\s\S]*\*\*Returns:\*\*)(?=[\s\S]*\*\*Examples\*\*)/, 'the overlay\'s returns note and examples are rendered')
  t.notMatch(stderr, /Module\._load REQUEST yaml\b/, 'and yaml was never loaded')
  t.match(stderr, /REQUEST node:\S+ parent: \S*[/\\]stdio\.cjs\b/, 'the command ran from the CommonJS bundle that has the code cache')
  t.match(stderr, /MODULE \d+: /, 'NODE_DEBUG did report module loads (the check above can fail)')
})

/** Peak resident set size of a process so far, in bytes (Linux /proc). */
function peakRss (pid: number): number {
  const match = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  return match === null ? NaN : Number(match[1]) * 1024
}

t.test('tsc\'s bin (src/cli.ts): stdout carries only JSON-RPC even at trace level, a dependency\'s console output goes to stderr; a 64 MiB line (cap 10 MiB) gets one -32600 and one warning, and memory stays near the cap', { skip: process.platform !== 'linux' && 'reads /proc', timeout: 60000 }, async (t) => {
  // The only run of src/cli.ts's console redirect. Stands in for a dependency: prints through console once the
  // CLI has taken console over.
  const preload = `const poll = setInterval(() => {
    if (console.log.name !== 'toStderr') return
    clearInterval(poll)
    console.log('dep-log', 1); console.info('dep-info'); console.debug('dep-debug'); console.warn('dep-warn')
  }, 5)`
  // Without the code index and the warm-up: its first scan, and the threads warmed once serving, grow the peak on their own.
  const proc = spawnStdio(t, ['--root', root, '--log-level', 'trace', '--code-index', 'off', '--lazy-threads'], { NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import=data:text/javascript,${encodeURIComponent(preload)}` }, COVERED_CLI)
  for (const message of [init, { jsonrpc: '2.0', method: 'notifications/initialized' }, { jsonrpc: '2.0', id: 2, method: 'tools/list' },
    { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'nope', arguments: {} } }, { jsonrpc: '2.0', id: 4, method: 'no/such/method' }]) proc.send(message)
  proc.child.stdin.write('this is not json\n')
  await proc.response(4)
  const before = peakRss(proc.child.pid!)

  // Written with backpressure, 1 MiB at a time, like a real client; a valid request follows at once.
  const chunk = Buffer.alloc(1024 * 1024, 0x78)
  chunk.write('{"jsonrpc":"2.0","id":5,"method":"ping","params":{"pad":"')
  for (let i = 0; i < 64; i++) {
    if (!proc.child.stdin.write(chunk)) await new Promise(resolve => proc.child.stdin.once('drain', resolve))
  }
  proc.child.stdin.write('"}}\n')
  proc.send({ jsonrpc: '2.0', id: 'after', method: 'ping' })
  const pong = await proc.response('after')
  const after = peakRss(proc.child.pid!)
  proc.child.stdin.end()
  t.same(await proc.exited, { code: 0, signal: null })

  const lines = proc.stdout
  t.equal(proc.partial(), '', 'no unterminated output')
  for (const line of lines) t.equal(JSON.parse(line).jsonrpc, '2.0', line.slice(0, 80))
  const messages = lines.map(line => JSON.parse(line) as { id: unknown, error?: { code: number, message: string } })
  t.same(messages.map(m => m.id).filter(id => id !== null).sort(), [1, 2, 3, 4, 'after'], 'one answer per request')
  t.same(messages.filter(m => m.id === null).map(m => m.error?.code).sort(), [-32600, -32700], 'one for the long line, one for the line that is not JSON')
  t.strictSame(pong.result, {})
  t.strictSame(messages.find(m => m.error?.code === -32600)?.error, { code: -32600, message: 'Invalid Request: the message exceeds the size limit' })
  // The framer holds at most the cap (10 MiB); the pipe is read into one reused buffer, so the line's other
  // 54 MiB leave no garbage behind (+37 MiB when every read allocated and held pieces kept whole chunks).
  t.ok(after - before < 24 * 1024 * 1024, `peak RSS grew ${((after - before) / 1048576).toFixed(1)} MiB (< 24 MiB)`)
  t.comment(`VmHWM before ${(before / 1048576).toFixed(1)} MiB, after ${(after / 1048576).toFixed(1)} MiB`)

  const stderr = proc.stderr()
  t.match(stderr, /^dep-log 1$/m)
  for (const word of ['dep-info', 'dep-debug', 'dep-warn']) t.match(stderr, new RegExp(`^${word}$`, 'm'))
  const json = stderr.split('\n').filter(line => line.startsWith('{')).map(line => JSON.parse(line) as Record<string, unknown>)
  t.equal(json.find(line => line.msg === 'stdio server ready')?.codeCache, 'none', 'dist/src/cli.js has no bundle beside it: the module itself')
  t.match(json.filter(line => line.level === 40), [{ bytes: 64 * 1024 * 1024 + 3, maxLineBytes: 10 * 1024 * 1024, msg: /^dropped a 67108867-byte line/ }])
  const manifest = (await runCli(['tools', '--json', '--root', root, '--code-index', 'off'])).stdout.replace(/\n$/, '')
  t.ok(manifest.startsWith('[{"name":') && lines.some(line => line.startsWith('{"jsonrpc":"2.0","id":2,') && line.includes(`"tools":${manifest}`)), '`tools --json` prints the bytes tools/list serves')
})

t.test('unparseable input answers -32700 with a null id and the session goes on', async (t) => {
  const proc = await stdioInProcess(t, ['--root', root])

  proc.write('{"jsonrpc":\n')
  proc.send({ jsonrpc: '2.0', id: 'after', method: 'ping' })
  const pong = await proc.response('after')

  t.match(JSON.parse(proc.stdout[0]), { id: null, error: { code: -32700 } })
  t.strictSame(pong.result, {})
})

t.test('exits 0 soon after stdin EOF', async (t) => {
  const proc = stdioCommandInProcess(t, ['--root', root])
  proc.send(init)
  await proc.response(1)

  proc.input.end()

  t.equal(await proc.exitWithin(5000), 0, 'exit 0, asked for within 5 s')
})

t.test('at stdin EOF the answers still owed reach a client that reads them; one that never reads cannot keep the process alive', async (t) => {
  const big = mkdtempSync(join(tmpdir(), 'wmcp-stdio-big-'))
  t.teardown(() => rmSync(big, { recursive: true, force: true }))
  // Four answers of ~56 KB each: far more is owed at EOF than a 64 KiB pipe holds.
  writeFileSync(join(big, 'big.txt'), Array.from({ length: 1200 }, (_, i) => `line ${i} of a file the client asked for`).join('\n'))
  const ids = [2, 3, 4, 5]
  const calls = ids.map(id => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'read_files', arguments: { files: [{ path: 'big.txt' }], max_response_tokens: 20000 } } }))

  t.test('a reader gets every answer, whole, before the exit', async (t) => {
    const proc = stdioCommandInProcess(t, ['--root', big])
    proc.send(init)
    await proc.response(1)
    proc.send({ jsonrpc: '2.0', method: 'notifications/initialized' })
    for (const call of calls) proc.send(call)
    proc.input.end()
    t.equal(await proc.exitWithin(10_000), 0)
    const answers = proc.stdout.filter(line => line !== '').map(line => JSON.parse(line) as { id: number, result?: { content: Array<{ text: string }> } })
    t.same(answers.map(a => a.id).sort((a, b) => a - b), [1, ...ids], 'one answer per request')
    for (const answer of answers.slice(1)) t.match(answer.result?.content[0].text, /line 1199 of a file/, `answer ${answer.id} whole`)
    t.ok(answers.slice(1).reduce((sum, a) => sum + JSON.stringify(a).length, 0) > 3 * 64 * 1024, 'what was owed at EOF exceeded the pipe several times over')
  })

  t.test('a client that never reads stdout: the command still exits, code 0', async (t) => {
    // An output nobody reads, which buffers 64 KiB before it asks the writer to wait: owe it many times that.
    const proc = testHost()
    const output = new Writable({ highWaterMark: 64 * 1024, write: () => {} })
    serveStdioCommand(['--root', big], { codeCache: 'none' }, { ...proc.host, output }).catch(t.threw)
    const owed = Array.from({ length: 16 }, (_, i) => ({ ...calls[0], id: 10 + i }))
    for (const message of [init, { jsonrpc: '2.0', method: 'notifications/initialized' }, ...owed]) proc.input.write(JSON.stringify(message) + '\n')
    proc.input.end()
    // A bound on a hang, not a wait: the exit is awaited, and 10 s only turns a hang into a failure that says so.
    t.equal(await Promise.race([proc.exited, new Promise(resolve => setTimeout(resolve, 10_000, 'still running'))]), 0, 'exited on its own')
    t.ok(output.writableLength > 8 * 64 * 1024, `over eight times what it buffers was owed, never read (${output.writableLength} bytes)`)
  })
})

t.test('a closed stdout (EPIPE) ends the command cleanly without a crash trace', async (t) => {
  const proc = stdioCommandInProcess(t, ['--root', root])
  proc.send(init)
  await proc.response(1)

  proc.output.destroy(Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }))
  for (let i = 0; i < 50; i++) proc.send({ jsonrpc: '2.0', id: 100 + i, method: 'tools/list' })

  t.equal(await proc.exitWithin(5000), 0)
  t.notMatch(proc.logs(), /Error: (write )?EPIPE|Unhandled|at .*\.js:\d+/)
})

t.test('SIGTERM exits promptly with code 0; so does SIGINT', async (t) => {
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    const proc = stdioCommandInProcess(t, ['--root', root])
    proc.send(init)
    await proc.response(1)

    proc.signal(signal)

    t.equal(await proc.exitWithin(5000), 0, signal)
  }
})

t.test('a bad configuration value stops startup with a message naming it and exit code 2', async (t) => {
  const run = await runCli(['stdio', '--root', root, '--tool-timeout-ms', 'soon'])

  t.equal(run.status, 2)
  t.match(run.stderr, /--tool-timeout-ms \/ WORKSPACE_MCP_TOOL_TIMEOUT_MS/)
  t.equal(run.stdout, '')
})

t.test('after answering the first message, the server checks the docs overlay and logs a stale example without being asked', async (t) => {
  const docs = join(mkdtempSync(join(tmpdir(), 'wmcp-docs-')), 'tools.yaml')
  t.teardown(() => rmSync(join(docs, '..'), { recursive: true, force: true }))
  writeFileSync(docs, 'tools:\n  list_directory:\n    examples:\n      - comment: too deep\n        arguments: { depth: 99 }\n')
  const proc = await stdioInProcess(t, ['--root', root, '--docs-file', docs])

  proc.send(init)
  t.ok((await proc.response(1)).result)
  await waitUntil(() => /tool docs: /.test(proc.stderr()), 'the docs overlay check to log')
  const logged = proc.stderr().split('\n').filter(line => line.includes('tool docs: ')).map(line => JSON.parse(line) as { tool: string, msg: string })
  t.match(logged, [{ tool: 'list_directory', msg: /overlay example 1 \("too deep"\) does not fit the input schema: depth/ }])
})

t.test('SIGTERM during a search: the search stops and its call answers with what it found, marked partial, before the exit (0)', { timeout: 30000 }, async (t) => {
  const rg = reportingRg()
  const proc = stdioCommandInProcess(t, ['--root', root, '--ripgrep-path', rg.path, '--code-index', 'off'])
  proc.send(init)
  await proc.response(1)
  proc.send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'search_regex', arguments: { pattern: 'hit' } } })
  await rg.reported()

  proc.signal('SIGTERM')
  const answer = await proc.response(2) as { result: { isError?: boolean, structuredContent: { matches: unknown[], notices: string[], pagination: { total_is_lower_bound: boolean } } } }

  t.equal(answer.result.isError, undefined)
  // Counted first: what the stopped counting pass had reported, at most its one line, and a lower bound.
  t.ok(answer.result.structuredContent.matches.length <= 1, 'no more than was found before the stop')
  t.equal(answer.result.structuredContent.pagination.total_is_lower_bound, true)
  t.match(answer.result.structuredContent.notices, [/search stopped early: the server is shutting down/])
  t.equal(await proc.exitWithin(10_000), 0)
})

t.test('SIGTERM while stdin EOF\'s drain waits on a search: the command exits once, code 0, the search answered partial', { timeout: 30000 }, async (t) => {
  const rg = reportingRg()
  const run = testHost()
  const codes: number[] = []
  const started = serveStdioCommand(['--root', root, '--ripgrep-path', rg.path, '--code-index', 'off'], { codeCache: 'none' }, { ...run.host, exit: (code) => { codes.push(code); run.host.exit(code) } })
  const { response } = stdoutLines(run.output, () => run.logs())
  run.input.write(JSON.stringify(init) + '\n')
  await response(1)
  run.input.write(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'search_regex', arguments: { pattern: 'hit' } } }) + '\n')
  await rg.reported()
  run.input.end()
  // The server has read to the end of its input: EOF's drain is what waits on the search now.
  await waitUntil(() => run.input.readableEnded, 'the server to read EOF')

  run.signal('SIGTERM')
  const answer = await response(2) as { result: { structuredContent: { notices: string[] } } }
  await started
  await run.exited
  // The drain's own end comes after the signal's exit: it must not ask again. A second exit would follow the services'
  // second close (already closed: at once) and stdout's drain (300 ms at most). This pause looks for something that
  // must not happen, so there is no state to wait on: a loaded machine can only make it miss, never fail wrongly.
  await new Promise(resolve => setTimeout(resolve, 1500))

  t.match(answer.result.structuredContent.notices, [/search stopped early: the server is shutting down/])
  t.same(codes, [0], 'one exit, code 0')
})
