import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Test } from 'tap'
import { stdoutLines } from './rpc.js'

const TSC_OUT = fileURLToPath(new URL('../../dist/src/', import.meta.url))

/** The shipped esbuild bundle (`npm run build`), as `npm start` and the packed tarball run it. */
export const BUNDLE = fileURLToPath(new URL('../../dist/bin/cli.js', import.meta.url))

/**
 * The bin the tests spawn: the shipped bundle (or WORKSPACE_MCP_TEST_CLI), with coverage off — it starts
 * in a third of the time tsc's output takes under coverage, and the code it runs is measured in-process.
 */
export const CLI = process.env.WORKSPACE_MCP_TEST_CLI ?? BUNDLE

/**
 * tsc's file-per-module output (built by `npm test`'s pretest), whose source maps place coverage exactly
 * where the in-process runs do: for the few tests that are the only ones to reach a line of `src/bin`.
 */
export const COVERED_CLI = path.join(TSC_OUT, 'cli.js')

/**
 * `workspace-mcp serve` with the conformance suite's fixtures served beside the product's tools: the test-only
 * entry (test/fixtures/conformance/serve.ts) run from source. Arguments that stand for `[CLI, 'serve']`.
 */
export const FIXTURE_SERVE = ['--import', fileURLToPath(new URL('./ts-loader.mjs', import.meta.url)), fileURLToPath(new URL('../fixtures/conformance/serve.ts', import.meta.url))]

/**
 * The environment for a child running `cli`. Only the tsc output reports coverage: the bundle's
 * composed source maps place V8's blocks differently, and merging them counts phantom branches.
 */
export function childEnv (cli: string, env: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  // tap's processinfo hook (in NODE_OPTIONS) records coverage in every child unless told not to.
  return cli.startsWith(TSC_OUT) ? { ...process.env, ...env } : { ...process.env, ...env, _TAPJS_PROCESSINFO_COVERAGE_: '0' }
}

/**
 * `command args` run outside tap's process tracking. tap hooks every spawn (process-on-spawn) and puts
 * its processinfo `--import` back into the child's NODE_OPTIONS, with its own variables, whatever env
 * the test passes; in a child whose coverage is not counted it only costs (~0.5 s of CPU per server
 * start). `env -u` drops them between the spawn and the command; pid, signals and exit code are the
 * command's own (env execs it).
 */
export function untracked (command: string, args: string[]): { command: string, args: string[] } {
  const tapVars = Object.keys(process.env).filter(key => key.startsWith('_TAPJS_PROCESSINFO_'))
  return { command: '/usr/bin/env', args: ['-u', 'NODE_OPTIONS', ...tapVars.flatMap(key => ['-u', key]), command, ...args] }
}

/** The command that runs `cli` with `args` in node (after `nodeArgs`, e.g. a heap limit): tracked by tap only for tsc's output, whose coverage counts. */
export function cliCommand (cli: string, args: string[], nodeArgs: string[] = []): { command: string, args: string[] } {
  return cli.startsWith(TSC_OUT) ? { command: process.execPath, args: [...nodeArgs, cli, ...args] } : untracked(process.execPath, [...nodeArgs, cli, ...args])
}

/** Spawns `workspace-mcp stdio` (from `cli`, node started with `nodeArgs`), collecting stdout lines and stderr; killed on teardown. */
export function spawnStdio (t: Test, args: string[] = [], env: NodeJS.ProcessEnv = {}, cli = CLI, nodeArgs: string[] = []) {
  const { command, args: argv } = cliCommand(cli, ['stdio', ...args], nodeArgs)
  const child: ChildProcessWithoutNullStreams = spawn(command, argv, {
    env: childEnv(cli, env),
    stdio: 'pipe'
  })
  let stderr = ''
  const { lines: stdout, partial, response } = stdoutLines(child.stdout, () => `stderr: ${stderr}`)
  child.stderr.on('data', (chunk) => { stderr += chunk })
  const exited = new Promise<{ code: number | null, signal: NodeJS.Signals | null }>(resolve => child.once('exit', (code, signal) => resolve({ code, signal })))
  // EOF first, so the server exits normally and its coverage is written (a SIGKILLed child records none).
  t.teardown(async () => {
    if (child.exitCode !== null || child.signalCode !== null) return
    child.stdin.end()
    const guard = setTimeout(() => child.kill('SIGKILL'), 10_000)
    await exited
    clearTimeout(guard)
  })

  const send = (message: unknown): void => { child.stdin.write(JSON.stringify(message) + '\n') }
  return { child, stdout, stderr: () => stderr, partial, exited, response, send }
}
