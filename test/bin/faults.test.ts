import t from 'tap'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { httpCommandInProcess, stdioCommandInProcess } from '../helpers/in-process.js'

// What the serving commands do with a failure nothing caught (src/bin/process-faults.ts, docs/deploy.md "Faults"):
// an unhandled rejection is logged at fatal with its stack and the server serves on; an uncaught exception is
// logged at fatal with its stack and the command exits 1.

const root = mkdtempSync(join(tmpdir(), 'wmcp-faults-'))
writeFileSync(join(root, 'a.txt'), 'hello\n')
t.teardown(() => rmSync(root, { recursive: true, force: true }))

/** The command's JSON log lines. */
const logLines = (text: string): Array<Record<string, any>> => text.split('\n').filter(line => line.startsWith('{')).map(line => JSON.parse(line))

t.test('serve: an unhandled rejection is a fatal line with the stack and the server serves on; an uncaught exception is a fatal line and exit 1', async (t) => {
  const server = await httpCommandInProcess(t, ['--root', root, '--code-index', 'off'])

  server.fault('unhandledRejection', new Error('a store blip nobody caught'))
  const health = await fetch(`${server.url}/healthz`)
  t.equal(health.status, 200, 'still serving')
  await health.body?.cancel()
  server.fault('uncaughtException', new TypeError('a bug thrown from a callback'))

  t.equal(await server.exitWithin(10_000), 1)
  // A process would be gone now; this one closes the listener the command left for the exit to end.
  server.signal('SIGTERM')
  const fatal = logLines(server.logs()).filter(line => line.level === 60)
  t.match(fatal, [
    { msg: 'unhandled promise rejection (a bug): logged, and the server serves on', err: { message: 'a store blip nobody caught', stack: /^Error: a store blip nobody caught\n\s+at / } },
    { msg: 'uncaught exception (a bug): the process state is unknown, exiting 1', err: { type: 'TypeError', stack: /^TypeError: a bug thrown from a callback/ } }
  ])
})

t.test('stdio: the same, and a rejection that is not an Error is logged as it is', async (t) => {
  const proc = stdioCommandInProcess(t, ['--root', root, '--code-index', 'off'])
  proc.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'faults', version: '1' } } })
  await proc.response(1)

  proc.fault('unhandledRejection', 'a bare string')
  proc.send({ jsonrpc: '2.0', id: 2, method: 'ping' })
  t.same((await proc.response(2)).result, {}, 'still answering')
  proc.fault('uncaughtException', new Error('a bug'))

  t.equal(await proc.exitWithin(10_000), 1)
  t.match(logLines(proc.logs()).filter(line => line.level === 60), [{ err: 'a bare string' }, { err: { message: 'a bug' } }])
})
