// Peer: the SDK v1's own Streamable HTTP server, stateless as its docs show it: a fresh McpServer
// (zod tools registered) and StreamableHTTPServerTransport per POST, JSON responses, on node:http.
// argv[2]: `call` registers echo only, `list` the 200 tools.
import { createServer } from 'node:http'
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js'
import * as z from 'zod'
import { registerSdkTools } from '../lib/synthetic-tools.js'

const list = process.argv[2] === 'list'

const http = createServer((req, res) => {
  const server = new McpServer({ name: 'sdk-peer', version: '1.0.0' })
  registerSdkTools(server, z, { list })
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true })
  res.on('close', () => { transport.close(); server.close() })
  server.connect(transport)
    .then(() => transport.handleRequest(req, res))
    .catch((err) => { res.statusCode = 500; res.end(String(err)) })
})
http.listen(0, '127.0.0.1', () => process.send({ port: http.address().port }))
process.once('SIGTERM', () => { http.close(); process.exit(0) })
