import type { Test } from 'tap'
import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { findRedis, freePort } from './redis.js'

/** A throw-away redis-server a test may kill (as a crash would) and start again on the same port. */
export interface RedisServer {
  url: string
  /** SIGKILLs the server (no persistence: its keys are gone); resolves once it exited. */
  kill(): Promise<void>
  /** Starts it again on the same port; resolves once it accepts connections. */
  start(): Promise<void>
}

/** Starts a redis-server on a free 127.0.0.1 port; killed on teardown. */
export async function redisServer (t: Test): Promise<RedisServer> {
  const bin = findRedis()
  if (bin === undefined) throw new Error('redis-server is not installed (apt-get install redis-server)')
  const port = await freePort()
  let child: ChildProcess | undefined
  const kill = async (): Promise<void> => {
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) return
    const exited = once(child, 'exit')
    child.kill('SIGKILL')
    await exited
  }
  const start = async (): Promise<void> => {
    const started = spawn(bin, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--protected-mode', 'yes'], { stdio: ['ignore', 'pipe', 'pipe'] })
    child = started
    let output = ''
    await new Promise<void>((resolve, reject) => {
      const guard = setTimeout(() => reject(new Error(`redis-server did not start:\n${output}`)), 10_000)
      const onData = (chunk: Buffer): void => {
        output += chunk.toString()
        if (output.includes('Ready to accept connections')) { clearTimeout(guard); resolve() }
      }
      started.stdout!.on('data', onData)
      started.stderr!.on('data', onData)
      started.once('exit', code => { clearTimeout(guard); reject(new Error(`redis-server exited with ${code}:\n${output}`)) })
    })
  }
  t.teardown(kill)
  await start()
  return { url: `redis://127.0.0.1:${port}`, kill, start }
}
