import { buildApp } from '../app.js'
import { loadConfig, parseConfigFlags } from '../config.js'
import { createLogger, logDestination } from '../logger.js'
import { checkRoot } from '../root-check.js'
import { createRuntime } from '../runtime.js'

/** `workspace-mcp serve`: Streamable HTTP on /mcp plus /healthz; logs to stdout; drains on SIGTERM. */
export async function main (argv: string[]): Promise<void> {
  const flags = parseConfigFlags(argv)
  const config = loadConfig(flags)
  const broadRoot = checkRoot(config, { refuseBroad: true, flags })
  const log = createLogger(config, await logDestination(1, config.logFormat))
  if (broadRoot !== undefined) log.warn({ root: config.root, reason: broadRoot }, 'serving a broad root (allowBroadRoot is set)')
  const runtime = await createRuntime(config, log)
  const app = await buildApp({ runtime, config })

  const exit = (code: number): void => {
    // A search still running (the drain timed out) would outlive us: ripgrep writes nothing until it
    // finds a match, so a closed pipe does not stop it.
    runtime.services.search?.close()
    log.flush()
    process.exit(code)
  }
  let stopping = false
  const stop = async (signal: string): Promise<void> => {
    if (stopping) {
      // A second signal means "now": no more waiting, and the exit says the drain did not finish.
      log.warn({ signal, unfinished: runtime.server.activeCalls() }, 'second signal; exiting without finishing the drain')
      exit(1)
      return
    }
    stopping = true
    log.info({ signal, drainMs: config.drainMs }, 'draining')
    // The listener stays open while draining: probes see /readyz answer 503, new /mcp requests get 503.
    const drained = await app.mcpDrain(config.drainMs)
    const unfinished = runtime.server.activeCalls()
    // Out of time: the connections still open (a call streaming its answer) would hold close() forever.
    if (!drained) app.server.closeAllConnections()
    await app.close().catch((err: unknown) => { log.error({ err }, 'close failed') })
    if (drained) return exit(0)
    log.error({ drainMs: config.drainMs, unfinished }, `drain timed out with ${unfinished.length} call(s) unfinished: ${unfinished.map(c => `${c.tool} (${c.ms} ms)`).join(', ')}`)
    exit(1)
  }
  // stop() catches close() failures itself; this only turns a bug in draining into exit 1 instead of a hang.
  /* c8 ignore start */
  const failed = (err: unknown): void => {
    process.stderr.write(`workspace-mcp: shutdown failed: ${String((err as Error)?.stack ?? err)}\n`)
    process.exit(1)
  }
  /* c8 ignore stop */
  process.on('SIGTERM', () => { stop('SIGTERM').catch(failed) })
  process.on('SIGINT', () => { stop('SIGINT').catch(failed) })

  await app.listen({
    host: config.host,
    port: config.port,
    listenTextResolver: (address) => `workspace-mcp listening at ${address}/mcp`
  })
  log.info({ mode: config.mode, root: config.root, tools: runtime.registry.tools.length }, 'http server ready')
  runtime.warmUp()
}
