import { assembleHttp, drainApp } from '../app.js'
import { loadConfig } from '../base/config.js'
import { commandFlags } from './command-flags.js'
import { createLogger, logFailure } from '../base/logger.js'
import { processHost, type ProcessHost } from './process-host.js'
import { handleFaults } from './process-faults.js'
import { checkRoot } from '../root-check.js'
import { httpOffersTasks, type RuntimeExtras } from '../runtime.js'

/** How long the services get to close at exit, ms. */
const CLOSE_WAIT_MS = 2000

/**
 * `workspace-mcp serve`: Streamable HTTP on /mcp plus /healthz; logs to stdout; drains on SIGTERM. `extras` are
 * served beside the product's tools (a test entry's fixtures; the shipped command passes none).
 */
export async function main (argv: string[], extras?: RuntimeExtras): Promise<void> {
  await serveHttpCommand(argv, processHost(), extras)
}

/** `workspace-mcp serve` on a host's environment, signals and exit (the process's in the bin); resolves once listening. */
export async function serveHttpCommand (argv: string[], host: ProcessHost, extras?: RuntimeExtras): Promise<void> {
  const flags = commandFlags('serve', argv)
  const config = loadConfig(flags, host.env)
  const broadRoot = checkRoot(config, { refuseBroad: true, flags })
  const log = createLogger(config, await host.logs(1, config.logFormat))
  if (broadRoot !== undefined) log.warn({ root: config.root, reason: broadRoot }, 'serving a broad root (--allow-broad-root is set)')
  // A refusal (an exposed bind without auth) comes before anything starts; at listen (a port in use) app.close() ends it all.
  const { app, runtime } = await assembleHttp(config, log, { extras, offerTasks: httpOffersTasks(config) })

  const exit = (code: number): void => {
    // The index thread may be writing: it is ended between two transactions, its lease released. A search still
    // running would outlive us (ripgrep writes nothing until it finds a match): close() kills it.
    Promise.race([runtime.close(), new Promise(resolve => setTimeout(resolve, CLOSE_WAIT_MS).unref())]).catch(logFailure(log, 'closing the services failed')).finally(() => {
      log.flush()
      host.exit(code)
    })
  }
  handleFaults(host, log, exit)
  let stopping = false
  const stop = async (signal: string): Promise<void> => {
    if (stopping) {
      // A second signal means "now": no more waiting, and the exit says the drain did not finish.
      log.warn({ signal, unfinished: runtime.server.activeCalls() }, 'second signal; exiting without finishing the drain')
      runtime.services.search?.close()
      log.flush()
      host.exit(1)
      return
    }
    stopping = true
    log.info({ signal, drainMs: config.drainMs }, 'draining')
    // The listener stays open while draining: probes see /readyz answer 503, new /mcp requests get 503.
    exit((await drainApp(app, runtime, config.drainMs)).exitCode)
  }
  // A close() that fails (or a bug in draining) is exit 1, not a hang.
  /* c8 ignore start */
  const failed = (err: unknown): void => {
    host.stderr.write(`workspace-mcp: shutdown failed: ${String((err as Error)?.stack ?? err)}\n`)
    host.exit(1)
  }
  /* c8 ignore stop */
  await app.listen({
    host: config.host,
    port: config.port,
    listenTextResolver: (address) => `workspace-mcp listening at ${address}/mcp`
  }).catch(async (err: unknown) => { await app.close(); throw err })
  host.signals.on('SIGTERM', () => { stop('SIGTERM').catch(failed) })
  host.signals.on('SIGINT', () => { stop('SIGINT').catch(failed) })
  log.info({ mode: config.mode, root: config.root, tools: runtime.registry.tools.length }, 'http server ready')
  runtime.warmUp()
}
