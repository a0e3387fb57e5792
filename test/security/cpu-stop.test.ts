import t from 'tap'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { stdioInProcess } from '../helpers/in-process.js'
import { cpuMs } from '../helpers/proc.js'

// "Work ends with the call": after a TIMEOUT answer the server must stop spending CPU on that call.
// Measured with the CPU time of the process serving it — this one, the server runs in-process (/proc/self/stat utime +
// stime, every thread) — never wall-clock limits.

const linux = process.platform === 'linux'

t.test('a timed-out call stops using CPU: get_file_info over 100 × 10 MB line counts, and read_files', { skip: linux ? false : 'needs /proc' }, async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'wmcp-cpu-'))
  t.teardown(() => rmSync(root, { recursive: true, force: true }))
  // 10 MB of short lines: line counting is pure CPU once the page cache holds it.
  writeFileSync(join(root, 'big.txt'), 'x\n'.repeat(5 * 1024 * 1024))
  // The code index's first scan and the warm-up of the counter and parser threads (started once serving) are
  // background work, not the call's.
  const server = await stdioInProcess(t, ['--root', root, '--tool-timeout-ms', '100', '--code-index', 'off', '--lazy-threads'])
  server.send({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } } })
  await server.response(0)
  server.send({ jsonrpc: '2.0', method: 'notifications/initialized' })
  // Warm the page cache so the measured work is CPU, not disk.
  server.send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_file_info', arguments: { paths: ['big.txt'] } } })
  await server.response(1)

  const calls = [
    { name: 'get_file_info', arguments: { paths: Array.from({ length: 100 }, () => 'big.txt') } },
    { name: 'read_files', arguments: { files: Array.from({ length: 20 }, () => ({ path: 'big.txt', start_line: -1 })) } }
  ]
  let id = 10
  for (const call of calls) {
    server.send({ jsonrpc: '2.0', id, method: 'tools/call', params: call })
    const answer = await server.response(id++) as { result: { content: Array<{ text: string }> } }
    t.match(answer.result.content[0].text, /^ERROR TIMEOUT/, `${call.name} timed out`)
    // Anything still running for the call would show as CPU time over the next second: a call that
    // kept going burns ~1000 ms of it (one busy thread). Collecting the abandoned buffers (read_files
    // drops up to 200 MB) and a loaded CI machine add up to ~150 ms, hence the 300 ms line. Neither pause is a wait
    // for something to happen: the 50 ms lets the answer's own cleanup pass first, the second is the window measured
    // (a loaded machine only makes a running call show less CPU in it, never a stopped one more).
    await new Promise(resolve => setTimeout(resolve, 50))
    const before = cpuMs('self')
    await new Promise(resolve => setTimeout(resolve, 1000))
    const after = cpuMs('self')
    t.comment(`${call.name}: ${after - before} ms of CPU in the second after the TIMEOUT answer`)
    t.ok(after - before <= 300, `${call.name}: CPU after the timeout ${after - before} ms (≤ 300 ms: garbage collection and noise, not a running call)`)
  }
})
