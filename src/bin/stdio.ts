import { loadConfig } from '../base/config.js'
import { commandFlags } from './command-flags.js'
import { createLogger, logFailure } from '../base/logger.js'
import { processHost, type ProcessHost } from './process-host.js'
import { handleFaults } from './process-faults.js'
import { serveStdio } from '../mcp/stdio.js'
import { checkRoot } from '../root-check.js'
import { createRuntime } from '../runtime.js'
import type { LoadedBundle } from '../code-cache.js'

/** How the command was started, for the ready line (cli.ts knows; a slow start on an unusual Node shows here). */
export interface StdioStartup {
  /** What V8 made of the bundle's code cache: `rejected` means a slower start (another Node or V8 flags). */
  codeCache: LoadedBundle<unknown>['cache']
}

/** Time to write the last answers once every call has ended. */
const ANSWER_GRACE_MS = 500
/** On a signal, how long running calls get to answer once their searches stop, ms. */
const WIND_DOWN_GRACE_MS = 1000
/** How long the services get to close at exit, ms. */
const CLOSE_WAIT_MS = 2000

/** `workspace-mcp stdio` in this process: MCP over stdin/stdout; logs go to stderr only. */
export async function main (argv: string[], startup: StdioStartup): Promise<void> {
  await serveStdioCommand(argv, startup, processHost())
}

/** `workspace-mcp stdio` on a host's streams, signals and exit (the process's in the bin). */
export async function serveStdioCommand (argv: string[], startup: StdioStartup, host: ProcessHost): Promise<void> {
  const flags = commandFlags('stdio', argv)
  const config = loadConfig(flags, host.env)
  const broadRoot = checkRoot(config, { refuseBroad: true, flags })
  const log = createLogger(config, await host.logs(2, config.logFormat))
  if (broadRoot !== undefined) log.warn({ root: config.root, reason: broadRoot }, 'serving a broad root (--allow-broad-root is set)')
  const runtime = await createRuntime(config, log)
  // A pipe (how clients start us) is read into one reused buffer; a terminal or file through process.stdin.
  const { output } = host
  const stdio = serveStdio({ server: runtime.server, input: host.input(), output, log })
  log.info({ root: config.root, tools: runtime.registry.tools.length, codeCache: startup.codeCache }, 'stdio server ready')
  stdio.answered.then(runtime.warmUp).catch(logFailure(log, 'warm-up failed'))

  let ending = false
  const exit = (code: number): void => {
    if (ending) return
    ending = true
    // The index thread may be writing: it is ended between two transactions, its lease released. ripgrep writes
    // nothing until it finds a match, so a closed pipe would not stop a running search: close() kills it.
    Promise.race([runtime.close(), new Promise(resolve => setTimeout(resolve, CLOSE_WAIT_MS).unref())]).catch(logFailure(log, 'closing the services failed')).finally(() => {
      log.flush()
      let exited = false
      const once = (): void => {
        if (exited) return
        exited = true
        host.exit(code)
      }
      // Let stdout drain what was already written; never wait on the event loop's timers.
      if (output.writableLength === 0) once()
      output.once('drain', once)
      setTimeout(once, 300).unref()
    })
  }
  handleFaults(host, log, exit)
  // A signal cannot wait for every call: running searches stop with what they found, the rest answer
  // SHUTTING_DOWN, and those answers are written before the exit.
  let stopping = false
  const stop = async (): Promise<void> => {
    stopping = true
    await runtime.windDown(WIND_DOWN_GRACE_MS)
    stdio.close()
    exit(0)
  }
  // stop() does not reject; this only turns a bug in it into exit 1 instead of a hang.
  /* c8 ignore next */
  const failed = (): void => host.exit(1)
  // Once each: a second Ctrl-C gets the default action, an immediate end.
  host.signals.once('SIGTERM', () => { stop().catch(failed) })
  host.signals.once('SIGINT', () => { stop().catch(failed) })

  const reason = await stdio.done
  if (stopping) return
  // Stdin EOF is how a client asks to shut down (it waits, then sends SIGTERM): answer every call already
  // sent — each ends by its deadline — so `printf '…' | workspace-mcp stdio` loses nothing on a cold start.
  if (reason === 'eof') await stdio.drain(config.toolTimeoutMs + ANSWER_GRACE_MS)
  exit(0)
}
