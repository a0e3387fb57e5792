import pino from 'pino'
import { buildApp } from '../app.js'
import { loadConfig, parseConfigFlags } from '../config.js'
import { createLogger } from '../logger.js'
import { checkRoot } from '../root-check.js'
import { createRuntime } from '../runtime.js'

/** Longest wait for in-flight requests after SIGTERM/SIGINT before exiting anyway. */
const DRAIN_MS = 10_000

/** `workspace-mcp serve`: Streamable HTTP on /mcp plus /healthz; logs to stdout; drains on SIGTERM. */
export async function main (argv: string[]): Promise<void> {
  const flags = parseConfigFlags(argv)
  const config = loadConfig(flags)
  const broadRoot = checkRoot(config, { refuseBroad: true, flags })
  const log = createLogger(config, pino.destination({ dest: 1, sync: false }))
  if (broadRoot !== undefined) log.warn({ root: config.root, reason: broadRoot }, 'serving a broad root (allowBroadRoot is set)')
  const runtime = await createRuntime(config, log)
  const app = await buildApp({ runtime, config })

  let stopping = false
  const stop = (signal: string): void => {
    if (stopping) return
    stopping = true
    log.info({ signal }, 'draining')
    const exit = (): void => {
      log.flush()
      process.exit(0)
    }
    setTimeout(() => { log.warn({ drainMs: DRAIN_MS }, 'drain timed out; exiting'); exit() }, DRAIN_MS).unref()
    app.close().then(exit, (err: unknown) => { log.error({ err }, 'close failed'); exit() })
  }
  process.once('SIGTERM', () => stop('SIGTERM'))
  process.once('SIGINT', () => stop('SIGINT'))

  await app.listen({
    host: config.host,
    port: config.port,
    listenTextResolver: (address) => `workspace-mcp listening at ${address}/mcp`
  })
  log.info({ mode: config.mode, root: config.root, tools: runtime.registry.tools.length }, 'http server ready')
}
