// Peer: the SDK v1's low-level `Server` over its `StdioServerTransport`, answering the same
// echo call (its idiomatic stdio setup, minus zod argument schemas).
import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js'
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js'

const server = new Server({ name: 'sdk-peer', version: '1.0.0' }, { capabilities: { tools: {} } })
server.setRequestHandler(ListToolsRequestSchema, async () => ({
  tools: [{ name: 'echo', description: 'Echo the given text back unchanged.', inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] } }]
}))
server.setRequestHandler(CallToolRequestSchema, async (request) => ({
  content: [{ type: 'text', text: String(request.params.arguments?.text ?? '') }]
}))
await server.connect(new StdioServerTransport())
