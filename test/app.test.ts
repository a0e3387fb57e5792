import t from 'tap'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { CallToolResultSchema, LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js'
import { buildApp } from '../src/app.js'
import { buildTestApp } from './helpers/build-app.js'
import { waitUntil } from './helpers/wait.js'

for (const mode of ['stateful', 'stateless'] as const) {
  t.test(`the SDK client connects over Streamable HTTP (${mode}), lists tools and calls one`, async (t) => {
    const { app } = await buildTestApp(t, { config: { mode } })
    const base = await app.listen({ host: '127.0.0.1', port: 0 })
    const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`))
    const client = new Client({ name: 'app-test', version: '1.0.0' })
    await client.connect(transport)
    t.teardown(() => client.close())

    const { tools } = await client.listTools()
    const result = await client.callTool({ name: 'echo_text', arguments: { text: 'hi', times: 2 } })

    t.ok(tools.some(tool => tool.name === 'echo_text'))
    t.match(result, { content: [{ type: 'text', text: 'hihi' }] })
    t.equal(transport.sessionId === undefined, mode === 'stateless')
    if (mode === 'stateful') {
      await transport.terminateSession()
      t.equal(transport.sessionId, undefined)
    }
  })
}

t.test('the SDK client receives progress and log notifications before the result', async (t) => {
  const { app } = await buildTestApp(t)
  const base = await app.listen({ host: '127.0.0.1', port: 0 })
  const client = new Client({ name: 'app-test', version: '1.0.0' })
  await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`)))
  t.teardown(() => client.close())
  const events: string[] = []
  client.setNotificationHandler(LoggingMessageNotificationSchema, () => { events.push('log') })
  await client.setLoggingLevel('debug')

  const result = await client.request(
    { method: 'tools/call', params: { name: 'slow_tool', arguments: { ms: 5 } } },
    CallToolResultSchema,
    { onprogress: (p) => { events.push(`progress ${p.progress}`) } }
  )
  events.push('result')

  t.match(result, { content: [{ text: 'finished' }] })
  t.same(events, ['progress 1', 'log', 'progress 2', 'result'])
})

t.test('the SDK client answers a sampling request sent during a tool call', async (t) => {
  const { app } = await buildTestApp(t)
  const base = await app.listen({ host: '127.0.0.1', port: 0 })
  const client = new Client({ name: 'app-test', version: '1.0.0' }, { capabilities: { sampling: {} } })
  const { CreateMessageRequestSchema } = await import('@modelcontextprotocol/sdk/types.js')
  client.setRequestHandler(CreateMessageRequestSchema, async () => ({ role: 'assistant', content: { type: 'text', text: 'from the model' }, model: 'test' }))
  await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`)))
  t.teardown(() => client.close())

  const result = await client.callTool({ name: 'ask_client', arguments: {} })

  t.match(result, { content: [{ text: /from the model/ }] })
})

t.test('drainApp: a slow call past the drain is stopped and answered SHUTTING_DOWN; a client stalled mid-body is counted unanswered', async (t) => {
  const { app, runtime } = await buildTestApp(t, { config: { mode: 'stateless' } })
  const base = await app.listen({ host: '127.0.0.1', port: 0 })
  const { port } = new URL(base)
  // JSON only: the tool's progress then has nowhere to go, and the answer is one JSON body.
  const headers = { 'content-type': 'application/json', accept: 'application/json' }
  const slow = fetch(`${base}/mcp`, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'slow_tool', arguments: { ms: 60_000 } } }) })
  // A client that sends its headers and half its body, then nothing: its POST never completes.
  const stalled = (await import('node:net')).connect(Number(port), '127.0.0.1')
  stalled.on('error', () => {})
  stalled.write(`POST /mcp HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\ncontent-type: application/json\r\naccept: application/json\r\ncontent-length: 100\r\n\r\n{"jsonrpc"`)
  await waitUntil(() => runtime.server.activeCalls().length === 1 && app.mcpStats().receiving === 1, 'the call to run and the stalled body to be arriving')
  const { drainApp } = await import('../src/app.js')

  const outcome = await drainApp(app, runtime, 50)
  const answer = await (await slow).json() as { result: { isError: boolean, content: Array<{ text: string }> } }

  t.match(outcome, { drained: false, stopped: [{ tool: 'slow_tool' }], unanswered: 1 })
  t.equal(answer.result.isError, true)
  t.match(answer.result.content[0].text, /^ERROR SHUTTING_DOWN: the server is shutting down and stopped slow_tool before it finished\. Hint: call it again/)
  stalled.destroy()
})

t.test('buildApp given a Redis URL but no stores refuses: the runtime\'s engine would keep its tasks in this process alone', async (t) => {
  const { runtime } = await buildTestApp(t)
  await t.rejects(buildApp({ runtime, config: { ...runtime.config, redisUrl: 'redis://127.0.0.1:1' } }), { message: /^buildApp: config\.redisUrl is set but no stores were given/ })
})
