import t from 'tap'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { CallToolResultSchema, LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js'
import { buildTestApp } from './helpers/build-app.js'

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
