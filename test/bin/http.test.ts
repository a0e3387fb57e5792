import t, { type Test } from 'tap'
import { runCli } from '../helpers/cli.js'
import { spawn } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { createServer, type AddressInfo } from 'node:net'
import { join } from 'node:path'
import { request } from 'undici'
import { childEnv, COVERED_CLI } from '../helpers/spawn-stdio.js'
import { testHost } from '../helpers/in-process.js'
import { childrenOf, onPath } from '../helpers/proc.js'
import { serveHttpCommand } from '../../src/bin/http.js'
import { conformanceFixtures } from '../fixtures/conformance/conformance.js'
import { reportingRg } from '../helpers/stand-in-rg.js'
import { waitUntil } from '../helpers/wait.js'

const root = mkdtempSync(join(tmpdir(), 'wmcp-http-bin-'))
writeFileSync(join(root, 'a.txt'), 'hello\n')

const ESC = '\u001b'
// pino-pretty's line, with or without colour codes around the level and the message.
const PRETTY_LINE = new RegExp(String.raw`^\[\d\d:\d\d:\d\d\.\d{3}\] (${ESC}\[\d+m)?INFO(${ESC}\[\d+m)?: (${ESC}\[\d+m)?workspace-mcp listening at (http://127\.0\.0\.1:\d+)/mcp`, 'm')
// util-linux's `script` gives the server a pseudo-terminal.
const script = onPath('script') !== undefined

t.test('the bin at a terminal: serve logs its URL in coloured pretty lines, answers /healthz and exits 0 after SIGTERM', { skip: script ? false : 'needs `script` (util-linux) for a pseudo-terminal', timeout: 30000 }, async (t) => {
  // The one spawned run of serve: tsc's output (for coverage, the only run of src/base/logger.ts's terminal branch), with
  // a pseudo-terminal from `script` as a person starting it has. SIGTERM is sent to the server itself, found by its
  // pid, the child `script` exec'd it as; `script -e` exits with its code. Logs into a pipe or file are JSON
  // (test/bin/log-format.test.ts); the command's other paths run in-process below.
  const command = `${process.execPath} ${COVERED_CLI} serve --port 0 --root ${root}`
  const child = spawn('script', ['-qec', `exec ${command}`, '/dev/null'], { env: childEnv(COVERED_CLI), stdio: ['ignore', 'pipe', 'inherit'] })
  t.teardown(() => { if (child.exitCode === null) child.kill('SIGKILL') })
  let output = ''
  const exit = new Promise<number | null>(resolve => child.once('close', resolve))
  const url = await new Promise<string>((resolve, reject) => {
    const guard = setTimeout(() => reject(new Error(`no listening line within 30 s: ${JSON.stringify(output)}`)), 30_000)
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString()
      const m = PRETTY_LINE.exec(output)
      if (m === null) return
      clearTimeout(guard)
      resolve(m[4])
    })
  })

  const health = await request(`${url}/healthz`)
  const body = await health.body.json()
  for (const server of childrenOf(child.pid as number)) process.kill(server, 'SIGTERM')

  t.equal(health.statusCode, 200)
  t.same(body, { status: 'ok' })
  t.equal(await exit, 0, 'exit 0 after the drain')
  t.ok(output.includes(`${ESC}[32mINFO`), 'coloured')
  t.notMatch(output, /"level":/, 'no JSON at a terminal')
  t.match(output, /INFO.*: .*draining/)
})

// The refusals in-process, as src/cli.ts runs the command: whatever was started before them is closed again.
const serveRefused = async (args: string[]): Promise<{ code: number, output: string }> => {
  const run = await runCli(['serve', '--root', root, '--port', '0', '--log-level', 'silent', ...args])
  return { code: run.status, output: run.stdout + run.stderr }
}

t.test('serve refuses a non-loopback bind without authentication, saying what to set, exit 2', async (t) => {
  const { code, output } = await serveRefused(['--host', '0.0.0.0', '--allowed-hosts', 'mcp.example.com'])

  t.equal(code, 2)
  t.match(output, /WORKSPACE_MCP_AUTH_TOKENS/)
  t.match(output, /--insecure-no-auth/)
})

t.test('a port already in use is a runtime error: exit 1 with Node\'s reason on stderr', async (t) => {
  const busy = createServer()
  await new Promise<void>(resolve => busy.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { busy.close() })
  const { port } = busy.address() as AddressInfo
  const { code, output } = await serveRefused(['--host', '127.0.0.1', '--port', String(port)])

  t.equal(code, 1)
  t.match(output, new RegExp(`workspace-mcp: listen EADDRINUSE: address already in use 127\\.0\\.0\\.1:${port}`))
})

t.test('serve refuses a non-loopback bind without allowedHosts, naming the setting, exit 2', async (t) => {
  const { code, output } = await serveRefused(['--host', '0.0.0.0', '--insecure-no-auth'])

  t.equal(code, 2)
  t.match(output, /--allowed-hosts/)
  t.match(output, /WORKSPACE_MCP_ALLOWED_HOSTS/)
})

t.test('serve with neither says both at once, exit 2', async (t) => {
  const { code, output } = await serveRefused(['--host', '0.0.0.0'])

  t.equal(code, 2)
  t.match(output, /WORKSPACE_MCP_AUTH_TOKENS[\s\S]*WORKSPACE_MCP_ALLOWED_HOSTS/)
})

/** The serve command in-process over `root` (unless `args` name one) with `args` (and the conformance fixtures when `fixtures`): its URL, logs and exit. */
async function startServe (t: Test, args: string[], fixtures = false) {
  const run = testHost()
  t.teardown(async () => {
    if (run.ended()) return
    run.signal('SIGTERM')
    run.signal('SIGTERM')
    await run.exited
  })
  const rootArgs = args.includes('--root') ? [] : ['--root', root]
  await serveHttpCommand(['--host', '127.0.0.1', '--port', '0', ...rootArgs, ...args], run.host, fixtures ? conformanceFixtures() : undefined)
  const url = /listening at (http:\/\/127\.0\.0\.1:\d+)\/mcp/.exec(run.logs())?.[1]
  if (url === undefined) throw new Error(`serve logged no address: ${run.logs()}`)
  return { ...run, url }
}

/** Opens a session and starts a call that waits for the client (a sampling request nobody answers); `rest` reads its stream to the end. */
async function hangingCall (url: string): Promise<{ controller: AbortController, rest: () => Promise<string> }> {
  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }
  const init = await fetch(`${url}/mcp`, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: { sampling: {} }, clientInfo: { name: 't', version: '1' } } }) })
  const session = init.headers.get('mcp-session-id') as string
  const controller = new AbortController()
  const call = await fetch(`${url}/mcp`, { method: 'POST', headers: { ...headers, 'mcp-session-id': session }, body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'test_sampling', arguments: { prompt: 'hi' } } }), signal: controller.signal })
  // The call is running once the sampling request arrives on its SSE stream.
  const reader = call.body!.getReader()
  const decoder = new TextDecoder()
  for (let seen = ''; !seen.includes('sampling/createMessage');) seen += decoder.decode((await reader.read()).value)
  const rest = async (): Promise<string> => {
    let text = ''
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) text += decoder.decode(chunk.value)
    return text
  }
  return { controller, rest }
}

t.test('a call that outlives the drain is answered SHUTTING_DOWN on its stream before the exit (0); probes see 503 meanwhile', { timeout: 30000 }, async (t) => {
  const serve = await startServe(t, ['--drain-ms', '1500'], true)
  const { url } = serve
  const call = await hangingCall(url)
  t.teardown(() => call.controller.abort())

  serve.signal('SIGTERM')
  await waitUntil(() => serve.logs().includes('"msg":"draining"'), 'the drain to begin')
  const ready = await request(`${url}/readyz`)
  const fresh = await request(`${url}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: '{"jsonrpc":"2.0","id":9,"method":"ping"}' })
  const rest = await call.rest()

  t.equal(ready.statusCode, 503, 'the listener is still open, and says it is not ready')
  t.equal(fresh.statusCode, 503, 'new work is refused while draining')
  t.match(rest, /"id":2,"result":\{"content":\[\{"type":"text","text":"ERROR SHUTTING_DOWN: the server is shutting down and stopped test_sampling before it finished\. Hint: call it again/, 'the call\'s final event, before its stream ended')
  t.equal(await serve.exited, 0)
  t.match(serve.logs(), /drain ran out after 1500 ms: 1 call\(s\) answered early \(partial, or SHUTTING_DOWN\): test_sampling/)
})

t.test('SIGTERM during a search that outlives the drain: the search stops and its call answers with what it found, marked partial', { timeout: 30000 }, async (t) => {
  // A ripgrep that reports one match, then runs on (as on a huge tree) until it is stopped.
  const rg = reportingRg('./a.txt')
  const serve = await startServe(t, ['--ripgrep-path', rg.path, '--drain-ms', '500', '--mode', 'stateless'])
  const { url } = serve
  const answer = fetch(`${url}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'search_regex', arguments: { pattern: 'hit' } } })
  })
  // The stand-in says when its match is written: the server reads it from the pipe before the pipe's end.
  await rg.reported()

  serve.signal('SIGTERM')
  const res = await answer
  const body = await res.json() as { result: { isError?: boolean, content: Array<{ text: string }>, structuredContent: { matches: unknown[], notices: string[], pagination: { total_is_lower_bound: boolean } } } }

  t.equal(res.status, 200)
  t.equal(body.result.isError, undefined, 'an answer, not an error')
  // Counted first: what the stopped counting pass had reported, at most its one line, and a lower bound.
  t.ok(body.result.structuredContent.matches.length <= 1, 'no more than was found before the stop')
  t.equal(body.result.structuredContent.pagination.total_is_lower_bound, true)
  t.match(body.result.structuredContent.notices, [/search stopped early: the server is shutting down; results are partial/])
  t.equal(await serve.exited, 0)
  t.match(serve.logs(), /1 call\(s\) answered early \(partial, or SHUTTING_DOWN\): search_regex/)
})

t.test('a second SIGTERM ends the drain at once with exit 1', { timeout: 30000 }, async (t) => {
  const serve = await startServe(t, ['--drain-ms', '60000'], true)
  const call = await hangingCall(serve.url)
  t.teardown(() => call.controller.abort())

  serve.signal('SIGTERM')
  await waitUntil(() => serve.logs().includes('"msg":"draining"'), 'the drain to begin')
  serve.signal('SIGTERM')

  t.equal(await serve.exited, 1)
  t.match(serve.logs(), /second signal; exiting without finishing the drain/)
  t.match(serve.logs(), /"unfinished":\[\{"tool":"test_sampling"/)
})

t.test('an index that cannot be written leaves the server serving: the reason in get_workspace_info, /readyz and /metrics, INDEX_UNAVAILABLE from find_symbol', { timeout: 90000 }, async (t) => {
  const tree = mkdtempSync(join(tmpdir(), 'wmcp-full-index-'))
  for (let i = 0; i < 500; i++) writeFileSync(join(tree, `unit${i}.c`), Array.from({ length: 12 }, (_, j) => `int handler_${i}_${j}(int request) { return request * ${j}; }`).join('\n') + '\n')
  const stateDir = mkdtempSync(join(tmpdir(), 'wmcp-full-state-'))
  const serve = await startServe(t, ['--root', tree, '--mode', 'stateless', '--state-dir', stateDir, '--index-max-mb', '1'])
  const { url } = serve
  const call = async (name: string, args: Record<string, unknown>) => {
    const res = await fetch(`${url}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }) })
    return (await res.json() as { result: { isError?: boolean, content: Array<{ text: string }>, structuredContent?: Record<string, any> } }).result
  }
  // The first call starts the scan; it fails on its first batches, within seconds.
  // A minute at most: the build runs on a thread of the test's own process, at the lowest priority, beside other files.
  await waitUntil(async () => (await call('get_workspace_info', {})).structuredContent?.code_index.state === 'unavailable', 'the index to say unavailable', 60_000, 100)

  const info = await call('get_workspace_info', {})
  const symbol = await call('find_symbol', { name: 'handler_1_1' })
  const read = await call('read_files', { files: [{ path: 'unit1.c', end_line: 1 }] })
  const ready = await request(`${url}/readyz`)
  const readyBody = await ready.body.json() as { status: string, degraded: string[] }
  const metrics = await (await request(`${url}/metrics`)).body.text()

  t.match(info.structuredContent?.code_index, { state: 'unavailable', problem: /^the code index reached its size limit, --index-max-mb \(.* free; the index needs about .*\)\. search_regex searches the files themselves; the operator can raise --index-max-mb/ })
  t.notMatch(JSON.stringify([info, symbol]), stateDir, 'no answer names the state folder\'s path')
  t.match(info.content[0].text, /\n- unavailable: the code index reached its size limit/)
  t.equal(symbol.isError, true)
  t.match(symbol.content[0].text, /^ERROR INDEX_UNAVAILABLE: the code index reached its size limit, --index-max-mb .* Hint: search_regex searches the files themselves; the operator can raise --index-max-mb \(WORKSPACE_MCP_INDEX_MAX_MB\) .*; the server tries again at \d\d:\d\d:\d\d UTC\.$/)
  t.match(read.content[0].text, /int handler_1_0/, 'the other tools serve')
  t.equal(ready.statusCode, 200, 'ready: the pod still serves every other tool')
  t.match(readyBody, { status: 'ok', degraded: [/^code index unavailable: the code index reached its size limit/] })
  t.match(metrics, /^mcp_code_index_state\{state="unavailable"\} 1$/m)
  t.match(metrics, /^mcp_code_index_store_failures_total [1-9]\d*$/m)
  t.match(serve.logs(), new RegExp(`"msg":"code index unavailable: database or disk is full \\(state folder ${stateDir}\\)`), 'logged once it failed, with the folder\'s path for the operator')
  t.notOk(serve.ended(), 'still running')
})
