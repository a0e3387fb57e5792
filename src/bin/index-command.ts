import { configLabel, configuredRoots, loadConfig } from '../base/config.js'
import { OWN_FLAGS, commandFlags } from './command-flags.js'
import { APP_ERR_CONFIG_INVALID } from '../base/errors.js'
import { createLogger, type Logger } from '../base/logger.js'
import { checkRoot } from '../root-check.js'
import { createServices } from '../services/index.js'
import { indexLocation, holderText, buildAndPublish, type PublishOutcome, loadSqlite, buildSettingsOf, type CodeIndexStatus } from '../services/code-index/index.js'
import { locateTreeSitter } from '../services/symbols/index.js'
import { commandLogs, splitArgs, type CommandIo } from './command-runtime.js'

/** Exit code when another build held the lease past --wait (sysexits EX_TEMPFAIL: try again later). */
export const EXIT_BUSY = 75

/** What the command prints for an outcome, and its exit code. */
export interface IndexReport {
  stdout: string
  stderr: string
  exitCode: number
}

/** Logs a build's progress, one line each time it is told. */
export function progressLogger (log: Logger): (status: CodeIndexStatus) => void {
  return (status) => log.info({ done: status.done, pending: status.pending, files: status.files }, `index: ${status.done} of ${status.pending} changed files parsed`)
}

/** The seconds of --wait (default 600). */
export function waitSecondsOf (values: string[] | undefined): number {
  const value = values?.at(-1) ?? '600'
  const seconds = Number(value)
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(seconds)) throw new APP_ERR_CONFIG_INVALID(`--wait: a whole number of seconds, received ${JSON.stringify(value)}`)
  return seconds
}

/** The result line (stdout) or the reason (stderr), and the exit code, of a build of `file`. */
export function indexReport (outcome: PublishOutcome, file: string, waitSeconds: number): IndexReport {
  if (outcome.outcome === 'busy') {
    return { stdout: '', stderr: `workspace-mcp index: another build holds ${file} (${holderText(outcome.holder)}) after waiting ${waitSeconds} s; nothing was published\n`, exitCode: EXIT_BUSY }
  }
  if (outcome.outcome === 'failed') {
    const { status } = outcome
    const why = status.problem === undefined ? status.error ?? status.state : `${status.problem.kind} at ${status.problem.stateDir}: ${status.problem.detail}`
    return { stdout: '', stderr: `workspace-mcp index: the build failed (${why}); the published index, if any, is unchanged\n`, exitCode: 1 }
  }
  const { status, ms } = outcome
  const empty = status.files === 0 ? 'workspace-mcp index: no source files were found: the roots hold none of the languages indexed, or an ignore file (.gitignore, .ignore) hides them\n' : ''
  const source = status.sourceBytes === undefined ? '' : `${(status.sourceBytes / 1048576).toFixed(1)} MB of source, `
  return { stdout: `${file}: ${status.files} source files, ${status.chunks} chunks, ${status.symbols} symbols (${source}${status.pending} parsed, ${(ms / 1000).toFixed(1)} s)\n`, stderr: empty, exitCode: 0 }
}

/**
 * `workspace-mcp index`: builds (or refreshes) the code index of the roots in the state folder and publishes
 * it for servers started with `--code-index shared` — a Kubernetes Job, an init container or a CI step. Progress
 * goes to stderr, the result line to stdout.
 */
export async function main (argv: string[], io: CommandIo): Promise<void> {
  const { own, rest } = splitArgs(argv, OWN_FLAGS.index)
  const waitSeconds = waitSecondsOf(own.wait)
  const flags = commandFlags('index', rest)
  const config = loadConfig(flags)
  checkRoot(config, { refuseBroad: false, flags })
  const log = createLogger(config, await commandLogs(io, config.logFormat))
  const sqlite = loadSqlite()
  const treeSitter = locateTreeSitter()
  /* c8 ignore next */
  if (sqlite === null || treeSitter === null) throw new Error(`${sqlite === null ? '@photostructure/sqlite' : 'web-tree-sitter'} is not installed or does not load here: no index can be built`)
  // The services only for the workspace: the index this command builds is its own, not the server's.
  const services = await createServices({ ...config, codeIndex: 'off', embeddingsUrl: '' }, log)
  const location = indexLocation(config.stateDir, configuredRoots(config), log)
  if (location.temporary) throw new APP_ERR_CONFIG_INVALID(`${configLabel('stateDir')}: ${location.dir} cannot be written, and an index in a temporary file would be gone at exit`)
  log.info({ file: location.file, roots: services.workspace.roots.map(r => r.name) }, 'index: building')
  const outcome = await buildAndPublish({
    workspace: services.workspace,
    treeSitter,
    ...buildSettingsOf(config),
    sqlite,
    published: location.file,
    log,
    waitMs: waitSeconds * 1000,
    progress: progressLogger(log)
  })
  await services.tokenizer.close()
  const report = indexReport(outcome, location.file, waitSeconds)
  io.stdout.write(report.stdout)
  io.stderr.write(report.stderr)
  io.exitCode = report.exitCode
}
