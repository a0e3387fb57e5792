// Peer: the SDK v2 (`@modelcontextprotocol/server`) McpServer over its StdioServerTransport, with the
// same zod echo tool as the HTTP peers (its idiomatic stdio setup).
import { McpServer } from '@modelcontextprotocol/server'
import { StdioServerTransport } from '@modelcontextprotocol/server/stdio'
import * as z from 'zod'
import { registerSdkTools } from '../lib/synthetic-tools.js'

const server = new McpServer({ name: 'sdk2-peer', version: '1.0.0' })
registerSdkTools(server, z, { list: false, objects: true })
await server.connect(new StdioServerTransport())
