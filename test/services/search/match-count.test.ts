import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import t from 'tap'
import { CLI, spawnStdio } from '../../helpers/spawn-stdio.js'

// Memory per search whatever the match count (issue 40): the shipped server under a 256 MB heap, searching a named
// file of 1 M and 2 M matching lines and a folder of 1 M. Before, the 1 M file answered an empty first page whose
// next offset was 0 (the page's fetch held every line, then dropped them all past its cap), at +182 MB of peak RSS.
// A process of its own because the process's memory is the point.

const MB = 1024 * 1024

/** `count` lines of `width` bytes (newline included), each holding NEEDLE and its own number; written in 1 MB pieces. */
function writeMatches (file: string, count: number, width: number, from = 0): void {
  const fd = fs.openSync(file, 'w')
  let piece: string[] = []
  for (let i = from; i < from + count; i++) {
    piece.push(matchLine(i, width) + '\n')
    if (piece.length * width >= MB) {
      fs.writeSync(fd, piece.join(''))
      piece = []
    }
  }
  fs.writeSync(fd, piece.join(''))
  fs.closeSync(fd)
}

/** Line `i` (0-based) of writeMatches, without its newline. */
const matchLine = (i: number, width: number): string => `line ${String(i).padStart(7, '0')} has a NEEDLE `.padEnd(width - 1, '.')

const peakMb = (pid: number): number => Number(/VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) / 1024

t.test('1 M and 2 M matching lines under a 256 MB heap: the server stays up, each first page is real and its next offset is past it', { skip: process.platform !== 'linux' && 'needs /proc' }, async (t) => {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'wsmcp-matches-')))
  t.teardown(() => fs.rmSync(root, { recursive: true, force: true }))
  // The file (62-byte lines), one of 2 M lines within the 100 MB a named file may have, and a folder of
  // 10 MB files (the walk's cap) holding 1 M more.
  writeMatches(path.join(root, 'm1000000.txt'), 1_000_000, 62)
  writeMatches(path.join(root, 'm2000000.txt'), 2_000_000, 50)
  fs.mkdirSync(path.join(root, 'parts'))
  for (let i = 0; i < 10; i++) writeMatches(path.join(root, 'parts', `p${i}.txt`), 100_000, 50, i * 100_000)
  fs.writeFileSync(path.join(root, 'warm.txt'), `${matchLine(0, 62)}\n`)

  // Without the warm-up: the parser thread it starts would be counted in the search's peak.
  const proc = spawnStdio(t, ['--root', root, '--log-level', 'silent', '--tokenizer-workers', '1', '--code-index', 'off', '--lazy-threads'], {}, CLI, ['--max-old-space-size=256'])
  proc.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } } })
  await proc.response(1)
  proc.send({ jsonrpc: '2.0', method: 'notifications/initialized' })
  let id = 1
  const call = async (name: string, args: Record<string, unknown>): Promise<{ isError?: boolean, content: Array<{ text: string }>, structuredContent?: any }> => {
    proc.send({ jsonrpc: '2.0', id: ++id, method: 'tools/call', params: { name, arguments: args } })
    // A dead server answers nothing: say how it ended rather than wait out the call.
    const answer = await Promise.race([proc.response(id, 90_000), proc.exited.then(end => ({ exited: end }))])
    if ('exited' in answer) throw new Error(`the server ended (${JSON.stringify(answer.exited)}): ${proc.stderr().slice(-2000)}`)
    return answer.result as any
  }
  await call('search_regex', { pattern: 'NEEDLE', path: 'warm.txt' })
  const base = peakMb(proc.child.pid as number)

  for (const [where, total, width] of [['m1000000.txt', 1_000_000, 62], ['m2000000.txt', 2_000_000, 50], ['parts', 1_000_000, 50]] as const) {
    const result = await call('search_regex', { pattern: 'NEEDLE', path: where })

    const growth = peakMb(proc.child.pid as number) - base
    t.comment(`${where}: peak RSS +${growth.toFixed(1)} MB`)
    t.notOk(result.isError, `${where}: ${result.content[0].text.slice(0, 300)}`)
    t.match(result.structuredContent?.pagination, { offset: 0, returned: 10, total, total_is_lower_bound: false, has_more: true, next_offset: 10 }, `${where}: a full first page, the next one after it`)
    const file = where === 'parts' ? 'parts/p0.txt' : where
    t.strictSame(result.structuredContent?.matches, Array.from({ length: 10 }, (_, i) => ({ path: file, line: i + 1, text: matchLine(i, width) })), `${where}: the file's first ten lines`)
    t.ok(growth < 48, `${where}: peak RSS growth ${growth.toFixed(1)} MB`)
  }
  t.notOk((await call('list_directory', { path: '.' })).isError, 'the server still answers')
})
