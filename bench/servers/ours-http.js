// Ours over HTTP: the built runtime and Fastify app (dist/src/app.js) in stateless mode with the
// default log level (the per-call line is at debug by default, so none is written). argv[2]: `call` registers
// the echo tool, `list` the 200 tools on a single tools/list page.
import { fileURLToPath } from 'node:url'
import pino from 'pino'
import { buildApp } from '../../dist/src/app.js'
import { loadConfig } from '../../dist/src/base/config.js'
import { createLogger } from '../../dist/src/base/logger.js'
import { createRuntime } from '../../dist/src/runtime.js'
import { oursTools } from '../lib/synthetic-tools.js'

const list = process.argv[2] === 'list'
const mode = process.argv[3] ?? 'stateless'
const root = fileURLToPath(new URL('../..', import.meta.url))
// WORKSPACE_MCP_* variables apply (e.g. WORKSPACE_MCP_CALL_LOG_LEVEL=debug to see the logging cost).
// No per-client rate limit: the load generator is one client sending thousands of requests a second.
// Room for the peers section's 1,000 idle sessions from one client address.
const config = loadConfig({ root, host: '127.0.0.1', port: '0', mode, toolsPageSize: '1000', rateLimitPerMinute: '0', maxSessions: '5000', maxSessionsPerClient: '5000' }, process.env)
const log = createLogger(config, pino.destination({ fd: 1, sync: false }))
const runtime = await createRuntime(config, log, { tools: oursTools({ list }), lint: false })
const app = await buildApp({ runtime })
await app.listen({ host: config.host, port: 0 })
process.send({ port: app.server.address().port })
process.once('SIGTERM', () => { app.close().then(() => process.exit(0)) })
