import { APP_ERR_CONFIG_INVALID } from '../base/errors.js'
import { loadConfig } from '../base/config.js'
import { commandFlags, type CommandName, type OwnFlags } from './command-flags.js'
import type { DestinationStream } from 'pino'
import { createLogger, logDestination } from '../base/logger.js'
import { checkRoot } from '../root-check.js'
import { createRuntime, type Runtime, type RuntimeOverrides } from '../runtime.js'
import { createServices, type ProductionServices } from '../services/index.js'

/** Where a command writes and how it says how it ended: `process` in the bin, captured text in tests. */
export interface CommandIo {
  stdout: { write: (text: string) => unknown }
  stderr: { write: (text: string) => unknown }
  exitCode?: number | string | null
}

/** A command's own flags, split from the config flags it passes on. */
export interface SplitArgs {
  /** Values of the command's own flags (repeatable flags collect every value). */
  own: Record<string, string[]>
  /** Everything else, for commandFlags. */
  rest: string[]
}

/**
 * Takes the command's own flags out of argv: `booleans` take no value, `values` take one
 * (`--tool NAME` or `--tool=NAME`, repeatable). A value flag without a value is bad usage.
 */
export function splitArgs (argv: string[], { booleans, values }: OwnFlags): SplitArgs {
  const own: Record<string, string[]> = {}
  const rest: string[] = []
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].split(/=(.*)/s, 2)
    const name = flag.replace(/^--/, '')
    if (flag.startsWith('--') && booleans.includes(name) && inline === undefined) {
      (own[name] ??= []).push('true')
    } else if (flag.startsWith('--') && values.includes(name)) {
      const value = inline ?? argv[++i]
      if (value === undefined || value === '' || value.startsWith('--')) throw new APP_ERR_CONFIG_INVALID(`${flag} needs a value`)
      ;(own[name] ??= []).push(value)
    } else {
      rest.push(argv[i])
    }
  }
  return { own, rest }
}

/** Where an offline command's logs go: the process's own stderr (a terminal gets pino-pretty), else the captured one as JSON lines. */
export async function commandLogs (io: CommandIo, format: string): Promise<DestinationStream> {
  return io.stderr === process.stderr ? await logDestination(2, format, true) : { write: (line: string) => { io.stderr.write(line) } }
}

/** A command's runtime, with the production services it always has. */
export type CommandRuntime = Runtime & Pick<ProductionServices, 'tokenizer' | 'clock'>

/** Builds the runtime for an offline command: config from flags + env, warnings only, on the command's stderr. */
export async function commandRuntime (command: CommandName, argv: string[], io: CommandIo, overrides: Omit<RuntimeOverrides, 'services'> = {}): Promise<CommandRuntime> {
  const flags = commandFlags(command, argv)
  const config = loadConfig(flags)
  // These commands print and serve no client, so a broad root is fine; a missing one is still exit 2.
  checkRoot(config, { refuseBroad: false, flags })
  // stdout carries only the command's output; logs go to stderr, warnings and worse.
  const log = createLogger({ logLevel: 'warn' }, await commandLogs(io, config.logFormat))
  const services = await createServices(config, log)
  const runtime = await createRuntime(config, log, { ...overrides, services })
  return { ...runtime, tokenizer: services.tokenizer, clock: services.clock }
}
