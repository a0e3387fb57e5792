import t from 'tap'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { spawnStdio } from '../helpers/spawn-stdio.js'

// Memory per read, measured where it matters: the peak RSS (VmHWM) of a spawned stdio server, which
// includes its tokenizer worker. Before streaming, these reads cost +300 MB and +92 MB (bench/read-fairness.mjs).
const BOUND_MB = 40
const MB = 1024 * 1024

const peakMb = (pid: number): number => Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) / 1024

t.test('a ranged read of a line in a 100 MB one-line file, and a whole read of a 9 MB file, stay under +40 MB peak RSS', { skip: process.platform !== 'linux' && 'needs /proc' }, async (t) => {
  const root = mkdtempSync(path.join(tmpdir(), 'read-memory-'))
  t.teardown(() => rmSync(root, { recursive: true, force: true }))
  writeFileSync(path.join(root, 'one-line.txt'), Buffer.alloc(100 * MB, 'abcdefgh '))
  const line = 'const value = compute(alpha, beta) + 42 // a line of ordinary source text, about 100 bytes long\n'
  // Short lines: a whole-file split makes a million strings (+92 MB before streaming; 100-byte lines: +28 MB).
  writeFileSync(path.join(root, 'nine.txt'), 'let a=1\n'.repeat(Math.ceil(9 * MB / 8)))
  writeFileSync(path.join(root, 'warm.txt'), line.repeat(400))

  const proc = spawnStdio(t, ['--root', root, '--log-level', 'silent', '--tokenizer-workers', '1'])
  proc.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } } })
  await proc.response(1)
  proc.send({ jsonrpc: '2.0', method: 'notifications/initialized' })
  let id = 1
  const read = async (file: Record<string, unknown>, budget = 10000): Promise<string> => {
    const res = await proc.response((proc.send({ jsonrpc: '2.0', id: ++id, method: 'tools/call', params: { name: 'read_files', arguments: { files: [file], max_response_tokens: budget } } }), id)) as { result: { content: Array<{ text: string }> } }
    return res.result.content[0].text
  }
  // Warm up: load the code paths and the tokenizer worker's ranks (a budget cut needs exact counts).
  t.match(await read({ path: 'warm.txt' }, 1000), /cut to fit max_response_tokens=1000/)
  const base = peakMb(proc.child.pid as number)

  const ranged = await read({ path: 'one-line.txt', start_line: 1, end_line: 1 })
  const afterRanged = peakMb(proc.child.pid as number)
  t.match(ranged, /lines 1–1 of 1 \(100 MB\)[^\n]*\n1\tabcdefgh /)
  t.match(ranged, /… \[line cut: 2000 chars shown of a 100 MB line\]/)
  t.ok(afterRanged - base < BOUND_MB, `ranged read of a 100 MB line: +${(afterRanged - base).toFixed(1)} MB peak RSS`)

  const whole = await read({ path: 'nine.txt' })
  const afterWhole = peakMb(proc.child.pid as number)
  t.match(whole, /### nine\.txt — lines 1–\d+ of 1179648 \(9\.0 MB\)/)
  t.ok(afterWhole - afterRanged < BOUND_MB, `whole read of a 9 MB file: +${(afterWhole - afterRanged).toFixed(1)} MB peak RSS`)
})
