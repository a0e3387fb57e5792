// Peer: FastMCP (punkpeye) over its stdio transport, with the same zod echo tool as the HTTP peer.
import { FastMCP } from 'fastmcp'
import * as z from 'zod'

const server = new FastMCP({ name: 'fastmcp-peer', version: '1.0.0', logger: { debug () {}, error () {}, info () {}, log () {}, warn () {} } })
server.addTool({
  name: 'echo',
  description: 'Echo the given text back unchanged; used by the benchmark to measure the transport and engine alone.',
  annotations: { title: 'Echo', readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  parameters: z.object({ text: z.string().max(1000).describe('Text to return, e.g. "hello"') }),
  execute: async ({ text }) => ({ content: [{ type: 'text', text }] })
})
await server.start({ transportType: 'stdio' })
