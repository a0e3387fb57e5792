import t from 'tap'
import fs from 'node:fs'
import pino from 'pino'
import { buildTestApp } from '../helpers/build-app.js'
import { openSession, postMcp } from '../helpers/rpc.js'
import { createLimiter } from '../../src/services/limiter.js'
import { createSearch } from '../../src/services/search/search.js'
import { createWorkspace } from '../../src/services/workspace/workspace.js'
import { waitUntil } from '../helpers/wait.js'

// /metrics in Prometheus text, and /readyz telling when the server cannot do its work.

const metric = (text: string, line: RegExp): boolean => text.split('\n').some(l => line.test(l))

t.test('tool calls by tool and outcome, their latency, sessions, work in flight and the limiter, in Prometheus text', async (t) => {
  const limiter = createLimiter({ search: { concurrency: 1, queue: 0 } })
  const { app } = await buildTestApp(t, { services: { limiter } })
  const session = await openSession(app)
  await postMcp(app, { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'echo_text', arguments: { text: 'hi' } } }, { 'mcp-session-id': session })
  await postMcp(app, { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'fail_tool', arguments: { kind: 'tool' } } }, { 'mcp-session-id': session })

  const res = await app.inject({ method: 'GET', url: '/metrics' })
  const text = res.body

  t.equal(res.statusCode, 200)
  t.match(res.headers['content-type'], /text\/plain; version=0\.0\.4/)
  t.ok(metric(text, /^mcp_tool_calls_total\{tool="echo_text",outcome="ok"\} 1$/), 'a call that succeeded')
  t.ok(metric(text, /^mcp_tool_calls_total\{tool="fail_tool",outcome="tool_error"\} 1$/), 'a call that failed as a tool error')
  t.ok(metric(text, /^mcp_tool_call_duration_seconds_count\{tool="echo_text"\} 1$/), 'its latency')
  t.ok(metric(text, /^mcp_sessions 1$/))
  t.ok(metric(text, /^mcp_http_requests_in_flight \d+$/))
  t.ok(metric(text, /^mcp_http_requests_receiving 0$/))
  t.ok(metric(text, /^mcp_tool_calls_in_flight 0$/))
  t.ok(metric(text, /^mcp_limiter_running\{kind="search"\} 0$/))
  t.ok(metric(text, /^mcp_limiter_refused\{kind="walk"\} 0$/))
  t.ok(metric(text, /^nodejs_eventloop_lag_p99_seconds /), 'Node\'s own, event-loop delay included')
})

t.test('rate-limited requests are counted; /metrics answers probes\' Host; an empty path turns it off', async (t) => {
  const { app } = await buildTestApp(t, { config: { rateLimitPerMinute: 1, mode: 'stateless', host: '0.0.0.0', allowedHosts: ['mcp.example.com'], insecureNoAuth: true } })
  const { app: off } = await buildTestApp(t, { config: { metricsPath: '' } })
  const ping = { jsonrpc: '2.0', id: 1, method: 'ping' }
  await postMcp(app, ping, { host: 'mcp.example.com' })
  await postMcp(app, ping, { host: 'mcp.example.com' })

  const scrape = await app.inject({ method: 'GET', url: '/metrics', headers: { host: '10.1.2.3:3000' } })
  const mcp = await postMcp(app, ping, { host: '10.1.2.3:3000' })

  t.equal(scrape.statusCode, 200, 'scraped by the pod address')
  t.ok(metric(scrape.body, /^mcp_rate_limited_requests_total 1$/))
  t.equal(mcp.statusCode, 403, 'the MCP endpoint still checks Host')
  t.equal((await off.inject({ method: 'GET', url: '/metrics' })).statusCode, 404)
})

t.test('/readyz is 503 with the reason when ripgrep is missing or the root is gone', async (t) => {
  const root = fs.realpathSync(t.testdir({ 'a.txt': 'x' }))
  const log = pino({ level: 'silent' })
  const workspace = await createWorkspace({ root, log })
  const search = await createSearch({ workspace, log })
  t.teardown(() => search.close())
  const { app: whole } = await buildTestApp(t, { services: { workspace, search } })
  const { app: noRipgrep } = await buildTestApp(t, { services: { workspace } })

  const ready = await whole.inject({ method: 'GET', url: '/readyz' })
  const missing = await noRipgrep.inject({ method: 'GET', url: '/readyz' })
  fs.rmSync(root, { recursive: true })
  const gone = await whole.inject({ method: 'GET', url: '/readyz' })

  t.equal(ready.statusCode, 200)
  t.equal(missing.statusCode, 503)
  t.match(missing.json(), { status: 'unusable', reason: /ripgrep/ })
  t.equal(gone.statusCode, 503)
  t.match(gone.json(), { status: 'unusable', reason: /root cannot be reached \(ENOENT\)/ })
  t.equal((await whole.inject({ method: 'GET', url: '/healthz' })).statusCode, 200, 'liveness is unaffected')
})

t.test('/readyz: a root replaced by a file is not a workspace any more', async (t) => {
  const base = t.testdir({ root: { 'a.txt': 'x' } })
  const root = fs.realpathSync(`${base}/root`)
  const log = pino({ level: 'silent' })
  const workspace = await createWorkspace({ root, log })
  const { app } = await buildTestApp(t, { services: { workspace } })

  fs.rmSync(root, { recursive: true })
  fs.writeFileSync(root, 'not a folder')
  const res = await app.inject({ method: 'GET', url: '/readyz' })

  t.equal(res.statusCode, 503)
  t.match(res.json(), { reason: 'the workspace root is no longer a folder' })
})

t.test('an event loop lagging past maxEventLoopDelayMs sheds /mcp with 503 + Retry-After; probes still answer', async (t) => {
  const { app } = await buildTestApp(t, { config: { maxEventLoopDelayMs: 50, mode: 'stateless' } })

  // Block this very process's loop past one of under-pressure's 1 s samples.
  const until = Date.now() + 1200
  while (Date.now() < until) { /* the lag */ }
  // The sampler's timer, overdue, runs first after the lag: the next requests are shed until the next sample.
  let shed = await postMcp(app, { jsonrpc: '2.0', id: 1, method: 'ping' })
  await waitUntil(async () => {
    if (shed.statusCode !== 503) shed = await postMcp(app, { jsonrpc: '2.0', id: 1, method: 'ping' })
    return shed.statusCode === 503
  }, 'the lag to be sampled')
  const probe = await app.inject({ method: 'GET', url: '/healthz' })

  t.equal(shed.statusCode, 503)
  t.equal(shed.headers['retry-after'], '2')
  t.match(shed.json(), { jsonrpc: '2.0', id: null, error: { message: /overloaded/ } })
  t.equal(probe.statusCode, 200)
})

t.test('a code index that cannot be written: its state and store failures in /metrics, listed as degraded by /readyz (still 200)', async (t) => {
  let failures = 1
  const problem = { kind: 'disk-full' as const, stateDir: '/var/lib/workspace-mcp', file: '/var/lib/workspace-mcp/index-x.sqlite', detail: 'database or disk is full', freeBytes: 1024 }
  const codeIndex = { close: async () => {}, status: () => ({ state: 'unavailable', scanning: false, pending: 0, done: 0, failures, files: 0, chunks: 0, symbols: 0, problem }) } as never
  const { app } = await buildTestApp(t, { services: { codeIndex } })

  const first = (await app.inject({ method: 'GET', url: '/metrics' })).body
  failures = 3
  const second = (await app.inject({ method: 'GET', url: '/metrics' })).body
  const ready = await app.inject({ method: 'GET', url: '/readyz' })

  t.ok(metric(first, /^mcp_code_index_state\{state="unavailable"\} 1$/))
  t.ok(metric(first, /^mcp_code_index_state\{state="ready"\} 0$/))
  t.ok(metric(first, /^mcp_code_index_store_failures_total 1$/))
  t.ok(metric(second, /^mcp_code_index_store_failures_total 3$/), 'a counter that follows the index\'s own count')
  t.equal(ready.statusCode, 200)
  t.same(ready.json(), { status: 'ok', degraded: ['code index unavailable: the code index cannot be written: the disk of the state folder (--state-dir) is full (1.0 KB free)'] })
})

t.test('parts that report a degradation: listed by /readyz (still 200), gauged and counted in /metrics until they recover', async (t) => {
  const { app, runtime } = await buildTestApp(t)

  runtime.degradations.report('task-heartbeat', 'heartbeats do not reach the task store')
  runtime.degradations.report('task-heartbeat', 'heartbeats do not reach the task store')
  const during = (await app.inject({ method: 'GET', url: '/metrics' })).body
  const ready = await app.inject({ method: 'GET', url: '/readyz' })
  runtime.degradations.recover('task-heartbeat')
  runtime.degradations.report('tokenizer', 'estimating')
  const after = (await app.inject({ method: 'GET', url: '/metrics' })).body
  const readyAfter = await app.inject({ method: 'GET', url: '/readyz' })

  t.ok(metric(during, /^mcp_degraded\{component="task-heartbeat"\} 1$/))
  t.ok(metric(during, /^mcp_degraded_reports_total\{component="task-heartbeat"\} 2$/))
  t.equal(ready.statusCode, 200)
  t.same(ready.json(), { status: 'ok', degraded: ['task-heartbeat: heartbeats do not reach the task store'] })
  t.notOk(metric(after, /^mcp_degraded\{component="task-heartbeat"\}/), 'a part that recovered is no longer gauged')
  t.ok(metric(after, /^mcp_degraded\{component="tokenizer"\} 1$/))
  t.ok(metric(after, /^mcp_degraded_reports_total\{component="task-heartbeat"\} 2$/), 'its reports stay counted')
  t.same(readyAfter.json(), { status: 'ok', degraded: ['tokenizer: estimating'] })
})
