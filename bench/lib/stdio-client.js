// A minimal JSON-RPC client over a spawned stdio bin, for the sections that time single tool calls.
import { spawn } from 'node:child_process'

/** Spawns `bin stdio --root root` (plus `extra` flags, and `env` beside this process's) and returns its child, `call(method, params)` (resolves with the message) and `initialize()`. */
export function stdioServer (bin, root, extra = [], env = {}) {
  const child = spawn(process.execPath, [bin, 'stdio', '--root', root, ...extra, '--log-level', 'silent'], { stdio: ['pipe', 'pipe', 'ignore'], env: { ...process.env, ...env } })
  const waiting = new Map()
  let partial = ''
  let id = 0
  child.stdout.setEncoding('utf8')
  child.stdout.on('data', (chunk) => {
    const lines = (partial + chunk).split('\n')
    partial = lines.pop()
    for (const line of lines) {
      const msg = JSON.parse(line)
      waiting.get(msg.id)?.(msg)
      waiting.delete(msg.id)
    }
  })
  const call = (method, params) => new Promise((resolve) => {
    const n = ++id
    waiting.set(n, resolve)
    child.stdin.write(JSON.stringify({ jsonrpc: '2.0', id: n, method, params }) + '\n')
  })
  const initialize = async () => {
    await call('initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'bench', version: '1' } })
    child.stdin.write(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) + '\n')
  }
  return { child, call, initialize }
}
