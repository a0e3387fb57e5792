import t from 'tap'
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { BUNDLE, childEnv } from '../helpers/spawn-stdio.js'
import { childrenOf } from '../helpers/proc.js'

// `npm start` as the README documents it: with a fresh build it starts at once (no rebuild), and a
// SIGTERM to npm reaches the server, which drains and exits — nothing is left bound to the port.

const repo = fileURLToPath(new URL('../..', import.meta.url))
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'

const refused = (port: number): Promise<boolean> => new Promise(resolve => {
  const socket = net.connect(port, '127.0.0.1')
  socket.once('connect', () => { socket.destroy(); resolve(false) })
  socket.once('error', () => resolve(true))
})

t.test('npm start skips the build when dist is fresh, and SIGTERM to npm stops the server it started', { skip: process.platform === 'win32' ? 'uses exec in a POSIX shell' : false, timeout: 60_000 }, async (t) => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'wmcp-start-'))
  t.teardown(() => fs.rmSync(root, { recursive: true, force: true }))
  // npm start runs the bundle, whose coverage would not line up with the sources' (see childEnv).
  const child = spawn(npm, ['start', '--silent', '--', '--port', '0', '--root', root], { cwd: repo, env: childEnv(BUNDLE), stdio: ['ignore', 'pipe', 'pipe'] })
  t.teardown(() => { child.kill('SIGKILL') })
  let stdout = ''
  let stderr = ''
  child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString() })
  const port = await new Promise<number>((resolve, reject) => {
    const guard = setTimeout(() => reject(new Error(`not listening: ${stdout}${stderr}`)), 30_000)
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString()
      const m = /listening at http:\/\/127\.0\.0\.1:(\d+)\/mcp/.exec(stdout)
      if (m !== null) { clearTimeout(guard); resolve(Number(m[1])) }
    })
  })
  const servers = childrenOf(child.pid as number)

  t.notMatch(stderr, /building/, 'no rebuild: the build is fresh')
  t.equal(await refused(port), false, 'serving')
  const exited = new Promise<number | null>(resolve => child.once('exit', code => resolve(code)))
  child.kill('SIGTERM')
  await exited

  t.match(stdout, /"msg":"draining"/, 'the server itself got the signal')
  t.equal(await refused(port), true, 'the port is free')
  for (const pid of servers) t.throws(() => process.kill(pid, 0), { code: 'ESRCH' }, `process ${pid} is gone`)
})
