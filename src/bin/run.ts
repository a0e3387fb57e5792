// Only node:* imports here (code-cache.ts has only those too): neither serving command may load the other's stack
// (stdio never loads Fastify); each command's module is imported when it is the one asked for.
import { fileURLToPath } from 'node:url'
import type { CommandName } from './command-flags.js'
import { loadBundle } from '../code-cache.js'
import type { CommandIo } from './command-runtime.js'

export type { CommandIo } from './command-runtime.js'

export const USAGE = `Usage: workspace-mcp <command> [options]

Commands:
  serve    Streamable HTTP on /mcp (plus GET /healthz)
  stdio    MCP over stdin/stdout (for Claude Desktop/Code, Cursor, Codex, the Inspector)
  index    Build the code index and publish it for replicas (--code-index shared)
  tools    List the tools this configuration serves (--json: the tools array tools/list serves)
  guide    Print the tool usage guide
  check    Check tool descriptions and schemas against the conventions

Run 'workspace-mcp <command> --help' for the options of one command, 'workspace-mcp --version' for the version.
Exit codes: 0 success, 1 check failed or runtime error, 2 bad usage or configuration, 75 index: another build held the index.`

interface Command { main: (argv: string[], io: CommandIo) => Promise<void> }

/** The stdio command from the build's CommonJS bundle and code cache (dist/bin), else from its module. */
async function stdioCommand (): Promise<Command> {
  const { exports, cache } = await loadBundle<typeof import('./stdio.js')>(
    fileURLToPath(new URL('./stdio.cjs', import.meta.url)), async () => await import('./stdio.js'))
  return { main: async (argv) => { await exports.main(argv, { codeCache: cache }) } }
}

/** Each command's module exports main(argv); the offline ones also take where to write. */
const COMMANDS: Record<CommandName, () => Promise<Command>> = {
  serve: async () => { const { main } = await import('./http.js'); return { main: async (argv) => { await main(argv) } } },
  stdio: stdioCommand,
  index: () => import('./index-command.js'),
  tools: () => import('./tools.js'),
  guide: () => import('./guide.js'),
  check: () => import('./check.js')
}

// Own keys only: `workspace-mcp toString` is a typo, not Object.prototype.toString.
const isCommand = (name: string): name is CommandName => Object.hasOwn(COMMANDS, name)

/** `workspace-mcp <command> [options]`: usage, version, or the command; throws what the command throws. */
export async function run (argv: string[], io: CommandIo): Promise<void> {
  const [command, ...rest] = argv
  if (command === undefined) {
    io.stderr.write(USAGE + '\n')
    io.exitCode = 2
    return
  }
  // Asked-for output goes to stdout (`workspace-mcp --help | less`); usage after a mistake goes to stderr.
  if (command === '--help' || command === '-h' || command === 'help') {
    io.stdout.write(USAGE + '\n')
    return
  }
  if (command === '--version' || command === '-v' || command === 'version') {
    const { PACKAGE } = await import('../package-info.js')
    io.stdout.write(`${PACKAGE.name} ${PACKAGE.version}\n`)
    return
  }
  if (!isCommand(command)) {
    // Loaded only for a typo: nothing but node:* loads before a command runs.
    const { closestName } = await import('../services/edit-distance.js')
    const close = closestName(command, Object.keys(COMMANDS))
    io.stderr.write(`Unknown command '${command}'${close === undefined ? '' : ` (did you mean '${close}'?)`}.\n\n${USAGE}\n`)
    io.exitCode = 2
    return
  }
  if (rest.includes('--help') || rest.includes('-h')) {
    const { commandHelp } = await import('./help.js')
    io.stdout.write(commandHelp(command) + '\n')
    return
  }
  const { main } = await COMMANDS[command]()
  await main(rest, io)
}

/** Says what failed on stderr and returns the exit code: 2 for bad usage or configuration, else 1. */
export function reportFailure (err: Error & { code?: string }, io: CommandIo): number {
  // Everything that lands here is an Error: ours (AppError, with a code) or Node's (EADDRINUSE, EACCES).
  io.stderr.write(`workspace-mcp: ${err.message}\n`)
  return err.code === 'APP_ERR_CONFIG_INVALID' ? 2 : 1
}
