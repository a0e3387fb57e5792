import type { Test } from 'tap'
import { spawn } from 'node:child_process'
import { createServer } from 'node:net'
import { onPath } from './proc.js'

/** Where redis-server is, or undefined (tests that need it skip, naming the package). */
export function findRedis (): string | undefined {
  return onPath('redis-server', ['/usr/bin/redis-server', '/usr/local/bin/redis-server', '/usr/sbin/redis-server'])
}

/** A free TCP port on 127.0.0.1 (closed again before it is returned). */
export async function freePort (): Promise<number> {
  const server = createServer()
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise(resolve => server.close(resolve))
  return port
}

/** Starts a throw-away redis-server on 127.0.0.1 (no persistence); stopped on teardown. Resolves its URL. */
export async function startRedis (t: Test): Promise<string> {
  return (await redisServer(t)).url
}

/**
 * A throw-away redis-server on 127.0.0.1 (no persistence, so a restart starts empty) on `port` (default: a free one);
 * stopped on teardown. `kill` ends it at once (SIGKILL: an outage, not a shutdown) and resolves once it has exited.
 */
export async function redisServer (t: Test, port?: number): Promise<{ url: string, port: number, kill: () => Promise<void> }> {
  const bin = findRedis()
  if (bin === undefined) throw new Error('redis-server is not installed (apt-get install redis-server)')
  port ??= await freePort()
  const child = spawn(bin, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--protected-mode', 'yes'], { stdio: ['ignore', 'pipe', 'pipe'] })
  const running = (): boolean => child.exitCode === null && child.signalCode === null
  const exited = new Promise<void>(resolve => child.once('exit', () => resolve()))
  t.teardown(() => { if (running()) child.kill('SIGKILL') })
  let output = ''
  await new Promise<void>((resolve, reject) => {
    const guard = setTimeout(() => reject(new Error(`redis-server did not start:\n${output}`)), 10_000)
    const onData = (chunk: Buffer): void => {
      output += chunk.toString()
      if (output.includes('Ready to accept connections')) { clearTimeout(guard); resolve() }
    }
    child.stdout!.on('data', onData)
    child.stderr!.on('data', onData)
    child.once('exit', code => { clearTimeout(guard); reject(new Error(`redis-server exited with ${code}:\n${output}`)) })
  })
  const kill = async (): Promise<void> => {
    if (running()) child.kill('SIGKILL')
    await exited
  }
  return { url: `redis://127.0.0.1:${port}`, port, kill }
}
