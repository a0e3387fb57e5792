import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import type { Test } from 'tap'

/** Absolute path of the built bin (tests run after `npm run build`); WORKSPACE_MCP_TEST_CLI points the bin tests at another build. */
export const CLI = process.env.WORKSPACE_MCP_TEST_CLI ?? fileURLToPath(new URL('../../dist/bin/cli.js', import.meta.url))

/** Spawns `workspace-mcp stdio`, collecting stdout lines and stderr; killed on teardown. */
export function spawnStdio (t: Test, args: string[] = [], env: NodeJS.ProcessEnv = {}) {
  const child: ChildProcessWithoutNullStreams = spawn(process.execPath, [CLI, 'stdio', ...args], {
    env: { ...process.env, ...env },
    stdio: 'pipe'
  })
  const stdout: string[] = []
  let stderr = ''
  let partial = ''
  const waiters: Array<() => void> = []
  child.stdout.setEncoding('utf8')
  child.stdout.on('data', (chunk: string) => {
    const parts = (partial + chunk).split('\n')
    partial = parts.pop() ?? ''
    stdout.push(...parts)
    for (const w of waiters.splice(0)) w()
  })
  child.stderr.on('data', (chunk) => { stderr += chunk })
  const exited = new Promise<{ code: number | null, signal: NodeJS.Signals | null }>(resolve => child.once('exit', (code, signal) => resolve({ code, signal })))
  t.teardown(() => { if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL') })

  /** Waits until a stdout line answers `id` (bounded by a 10 s guard). */
  async function response (id: number | string): Promise<Record<string, unknown>> {
    const deadline = Date.now() + 10000
    while (Date.now() < deadline) {
      for (const line of stdout) {
        const msg = JSON.parse(line)
        if (msg.id === id && ('result' in msg || 'error' in msg)) return msg
      }
      await new Promise<void>(resolve => { waiters.push(resolve); setTimeout(resolve, 200) })
    }
    throw new Error(`no response to ${id}; stderr: ${stderr}`)
  }
  const send = (message: unknown): void => { child.stdin.write(JSON.stringify(message) + '\n') }
  return { child, stdout, stderr: () => stderr, partial: () => partial, exited, response, send }
}
