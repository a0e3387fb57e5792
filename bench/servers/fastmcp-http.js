// Peer: FastMCP (punkpeye) with its httpStream transport, JSON responses. argv[2]: `call` or `list`;
// argv[3]: `stateless` (its stateless option) or `stateful` (its default: sessions).
import { createServer } from 'node:net'
import { FastMCP } from 'fastmcp'
import * as z from 'zod'
import { syntheticSpecs, LIST_SIZE } from '../lib/synthetic-tools.js'

const list = process.argv[2] === 'list'
const stateless = process.argv[3] !== 'stateful'

/** A free port on 127.0.0.1 (FastMCP takes a port number, not 0). */
const freePort = () => new Promise((resolve) => {
  const probe = createServer().listen(0, '127.0.0.1', () => { const { port } = probe.address(); probe.close(() => resolve(port)) })
})

const server = new FastMCP({ name: 'fastmcp-peer', version: '1.0.0', logger: { debug () {}, error () {}, info () {}, log () {}, warn () {} } })
server.addTool({
  name: 'echo',
  description: 'Echo the given text back unchanged; used by the benchmark to measure the transport and engine alone.',
  annotations: { title: 'Echo', readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  parameters: z.object({ text: z.string().max(1000).describe('Text to return, e.g. "hello"') }),
  execute: async ({ text }) => ({ content: [{ type: 'text', text }] })
})
if (list) {
  for (const spec of syntheticSpecs(LIST_SIZE - 1)) {
    server.addTool({
      name: spec.name,
      description: spec.description,
      annotations: { title: spec.title, readOnlyHint: true, openWorldHint: false },
      parameters: z.object({
        path: z.string().min(1).max(4096).describe('Path relative to the workspace root, e.g. "src/app.ts"'),
        limit: z.number().int().min(1).max(100).default(20).describe('Most items to return, e.g. 20'),
        recursive: z.boolean().default(false).describe('Descend into sub-folders, e.g. true')
      }),
      execute: async () => ({ content: [{ type: 'text', text: 'ok' }] })
    })
  }
}
const port = await freePort()
await server.start({ transportType: 'httpStream', httpStream: { host: '127.0.0.1', port, endpoint: '/mcp', enableJsonResponse: true, stateless } })
process.send({ port })
process.once('SIGTERM', () => { server.stop().then(() => process.exit(0)) })
