#!/usr/bin/env node
// Only node:* imports here (code-cache.ts has only those too): `stdio` must redirect console before
// any dependency loads, and neither mode should load the other's stack (stdio never loads Fastify).
import process from 'node:process'
import { fileURLToPath } from 'node:url'
import type { CommandName } from './bin/help.js'
import { loadBundle } from './code-cache.js'

const USAGE = `Usage: workspace-mcp <command> [options]

Commands:
  serve    Streamable HTTP on /mcp (plus GET /healthz)
  stdio    MCP over stdin/stdout (for Claude Desktop/Code, Cursor, Codex, the Inspector)
  index    Build the code index and publish it for replicas (--code-index shared)
  tools    Print the tools/list manifest exactly as served
  guide    Print the tool usage guide
  check    Check tool descriptions and schemas against the conventions

Run 'workspace-mcp <command> --help' for the options of one command, 'workspace-mcp --version' for the version.
Exit codes: 0 success, 1 check failed or runtime error, 2 bad usage or configuration, 75 index: another build held the index.`

interface Command { main: (argv: string[]) => Promise<void> }

/** The stdio command from the build's CommonJS bundle and code cache (dist/bin), else from its module. */
async function stdioCommand (): Promise<Command> {
  const { exports, cache } = await loadBundle<typeof import('./bin/stdio.js')>(
    fileURLToPath(new URL('./stdio.cjs', import.meta.url)), async () => await import('./bin/stdio.js'))
  return { main: async (argv) => { await exports.main(argv, { codeCache: cache }) } }
}

/** Each command's module exports main(argv). */
const COMMANDS: Record<CommandName, () => Promise<Command>> = {
  serve: () => import('./bin/http.js'),
  stdio: stdioCommand,
  index: () => import('./bin/index.js'),
  tools: () => import('./bin/tools.js'),
  guide: () => import('./bin/guide.js'),
  check: () => import('./bin/check.js')
}

// Own keys only: `workspace-mcp toString` is a typo, not Object.prototype.toString.
const isCommand = (name: string): name is CommandName => Object.hasOwn(COMMANDS, name)

async function run (argv: string[]): Promise<void> {
  const [command, ...rest] = argv
  if (command === undefined) {
    process.stderr.write(USAGE + '\n')
    process.exitCode = 2
    return
  }
  // Asked-for output goes to stdout (`workspace-mcp --help | less`); usage after a mistake goes to stderr.
  if (command === '--help' || command === '-h' || command === 'help') {
    process.stdout.write(USAGE + '\n')
    return
  }
  if (command === '--version' || command === '-v' || command === 'version') {
    const { PACKAGE } = await import('./package-info.js')
    process.stdout.write(`${PACKAGE.name} ${PACKAGE.version}\n`)
    return
  }
  if (!isCommand(command)) {
    process.stderr.write(`Unknown command '${command}'.\n\n${USAGE}\n`)
    process.exitCode = 2
    return
  }
  if (command === 'stdio') {
    // stdout belongs to JSON-RPC: anything a dependency prints goes to stderr.
    /* eslint-disable no-console -- the one place console is touched: pointing it at stderr */
    const toStderr = (...args: unknown[]): void => { process.stderr.write(args.map(String).join(' ') + '\n') }
    console.log = toStderr
    console.info = toStderr
    console.debug = toStderr
    console.warn = toStderr
    /* eslint-enable no-console */
  }
  if (rest.includes('--help') || rest.includes('-h')) {
    const { commandHelp } = await import('./bin/help.js')
    process.stdout.write(commandHelp(command) + '\n')
    return
  }
  const { main } = await COMMANDS[command]()
  await main(rest)
}

// Everything that lands here is an Error: ours (AppError, with a code) or Node's (EADDRINUSE, EACCES).
run(process.argv.slice(2)).catch((err: Error & { code?: string }) => {
  process.stderr.write(`workspace-mcp: ${err.message}\n`)
  process.exit(err.code === 'APP_ERR_CONFIG_INVALID' ? 2 : 1)
})
