// Peer: the SDK v2 (`@modelcontextprotocol/server`) on Fastify as its own adapter documents it
// (`@modelcontextprotocol/fastify` app, `@modelcontextprotocol/node` transport), JSON responses.
// argv[2]: `call` or `list`; argv[3]: `stateless` (a fresh McpServer and transport per POST) or
// `stateful` (one pair per session, found by Mcp-Session-Id).
import { randomUUID } from 'node:crypto'
import { createMcpFastifyApp } from '@modelcontextprotocol/fastify'
import { NodeStreamableHTTPServerTransport } from '@modelcontextprotocol/node'
import { McpServer } from '@modelcontextprotocol/server'
import * as z from 'zod'
import { registerSdkTools } from '../lib/synthetic-tools.js'

const list = process.argv[2] === 'list'
const stateful = process.argv[3] === 'stateful'
const sessions = new Map()

async function connect (sessionIdGenerator) {
  const server = new McpServer({ name: 'sdk2-peer', version: '1.0.0' })
  registerSdkTools(server, z, { list, objects: true })
  const transport = new NodeStreamableHTTPServerTransport({
    sessionIdGenerator,
    enableJsonResponse: true,
    onsessioninitialized: (id) => { sessions.set(id, transport) }
  })
  await server.connect(transport)
  return { server, transport }
}

const app = createMcpFastifyApp()
app.post('/mcp', async (request, reply) => {
  if (!stateful) {
    const { server, transport } = await connect(undefined)
    reply.raw.on('close', () => { transport.close(); server.close() })
    return transport.handleRequest(request.raw, reply.raw, request.body)
  }
  const known = sessions.get(request.headers['mcp-session-id'])
  const transport = known ?? (await connect(() => randomUUID())).transport
  return transport.handleRequest(request.raw, reply.raw, request.body)
})
await app.listen({ host: '127.0.0.1', port: 0 })
process.send({ port: app.server.address().port })
process.once('SIGTERM', () => { app.close().then(() => process.exit(0)) })
