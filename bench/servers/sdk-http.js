// Peer: the SDK v1's own Streamable HTTP server on node:http, JSON responses. argv[2]: `call`
// registers echo only, `list` the 200 tools. argv[3]: `stateless` (default; a fresh McpServer and
// transport per POST, as the SDK requires) or `stateful` (one pair per session, found by Mcp-Session-Id).
import { randomUUID } from 'node:crypto'
import { createServer } from 'node:http'
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js'
import * as z from 'zod'
import { registerSdkTools } from '../lib/synthetic-tools.js'

const list = process.argv[2] === 'list'
const stateful = process.argv[3] === 'stateful'
const sessions = new Map()

async function connect (sessionIdGenerator) {
  const server = new McpServer({ name: 'sdk-peer', version: '1.0.0' })
  registerSdkTools(server, z, { list })
  const transport = new StreamableHTTPServerTransport({
    sessionIdGenerator,
    enableJsonResponse: true,
    onsessioninitialized: (id) => { sessions.set(id, transport) }
  })
  await server.connect(transport)
  return { server, transport }
}

async function handle (req, res) {
  if (!stateful) {
    const { server, transport } = await connect(undefined)
    res.on('close', () => { transport.close(); server.close() })
    return transport.handleRequest(req, res)
  }
  const known = sessions.get(req.headers['mcp-session-id'])
  if (known !== undefined) return known.handleRequest(req, res)
  const { transport } = await connect(() => randomUUID())
  return transport.handleRequest(req, res)
}

const http = createServer((req, res) => {
  handle(req, res).catch((err) => { res.statusCode = 500; res.end(String(err)) })
})
http.listen(0, '127.0.0.1', () => process.send({ port: http.address().port }))
process.once('SIGTERM', () => { http.close(); process.exit(0) })
