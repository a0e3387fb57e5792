// The HTTP floor: a bare Fastify app with one POST route that parses the JSON-RPC body and answers
// with a fixed result. argv[2] is a file holding the result's JSON text (ours' exact bytes).
import { readFileSync } from 'node:fs'
import Fastify from 'fastify'

const result = readFileSync(process.argv[2], 'utf8')
const app = Fastify({ logger: false })
app.post('/mcp', (request, reply) => {
  reply.type('application/json').send(`{"jsonrpc":"2.0","id":${JSON.stringify(request.body.id)},"result":${result}}`)
})
await app.listen({ host: '127.0.0.1', port: 0 })
process.send({ port: app.server.address().port })
process.once('SIGTERM', () => { app.close().then(() => process.exit(0)) })
