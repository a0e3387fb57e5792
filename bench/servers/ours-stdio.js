// Ours over stdio: the built runtime and stdio framing exactly as `workspace-mcp stdio` wires them
// (dist/src/bin/stdio.js), with the bench's `echo` tool instead of the product tools and the
// default log level (info; the per-call line is at debug by default, so none is written).
import { fileURLToPath } from 'node:url'
import pino from 'pino'
import { loadConfig } from '../../dist/src/base/config.js'
import { createLogger } from '../../dist/src/base/logger.js'
import { serveStdio } from '../../dist/src/mcp/stdio.js'
import { createRuntime } from '../../dist/src/runtime.js'
import { oursTools } from '../lib/synthetic-tools.js'

const root = fileURLToPath(new URL('../..', import.meta.url))
// WORKSPACE_MCP_* variables apply (e.g. WORKSPACE_MCP_CALL_LOG_LEVEL=debug to see the logging cost).
const config = loadConfig({ root }, process.env)
const log = createLogger(config, pino.destination({ fd: 2, sync: false }))
const runtime = await createRuntime(config, log, { tools: oursTools({ list: false }), lint: false })
const stdio = serveStdio({ server: runtime.server, input: process.stdin, output: process.stdout, log })
const reason = await stdio.done
if (reason === 'eof') await stdio.drain(1500)
log.flush()
process.exit(0)
