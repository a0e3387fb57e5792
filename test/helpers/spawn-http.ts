import { spawn } from 'node:child_process'
import type { Test } from 'tap'
import { CLI, childEnv, cliCommand } from './spawn-stdio.js'
import { stop } from './processes.js'

/** Starts the built bin's HTTP server on 127.0.0.1 port 0 and resolves its /mcp URL; killed on teardown. */
export async function spawnHttp (t: Test, args: string[] = [], env: NodeJS.ProcessEnv = {}, cli = CLI): Promise<{ url: string, pid: number, output: () => string }> {
  const { command, args: argv } = cliCommand(cli, ['serve', '--host', '127.0.0.1', '--port', '0', ...args])
  const child = spawn(command, argv, {
    env: childEnv(cli, env),
    stdio: ['ignore', 'pipe', 'pipe']
  })
  // SIGTERM, so the server drains and exits normally: a child's coverage is written at its exit, and a
  // SIGKILLed one records none.
  t.teardown(() => stop(child))
  let output = ''
  const url = await new Promise<string>((resolve, reject) => {
    const guard = setTimeout(() => reject(new Error(`server did not report a URL within 15 s:\n${output}`)), 15000)
    const onData = (chunk: Buffer): void => {
      output += chunk.toString()
      const m = /listening at http:\/\/127\.0\.0\.1:(\d+)/.exec(output)
      if (m !== null && m[1] !== '0') {
        clearTimeout(guard)
        resolve(`http://127.0.0.1:${m[1]}/mcp`)
      }
    }
    child.stdout.on('data', onData)
    child.stderr.on('data', onData)
    child.once('exit', (code) => { clearTimeout(guard); reject(new Error(`server exited with ${code}:\n${output}`)) })
  })
  return { url, pid: child.pid!, output: () => output }
}
