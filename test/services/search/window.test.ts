import t from 'tap'
import { windowCollector } from '../../../src/services/search/window.js'
import type { FileEntry } from '../../../src/services/search/set.js'

// The window collector fed ripgrep's JSON by hand: the records real ripgrep never writes (not JSON, a begin that
// does not parse, a line too long to hold) and how it decides to stop. The paging property test drives it over
// real ripgrep.

const begin = (file: string): Buffer => Buffer.from(JSON.stringify({ type: 'begin', data: { path: { text: file } } }))
const end = (file: string): Buffer => Buffer.from(JSON.stringify({ type: 'end', data: { path: { text: file }, stats: { matched_lines: 0 } } }))
const line = (type: 'match' | 'context', file: string, n: number, text = `line ${n}`): Buffer =>
  Buffer.from(JSON.stringify({ type, data: { path: { text: file }, lines: { text: `${text}\n` }, line_number: n, submatches: [] } }))
const entry = (path: string, count: number): FileEntry => ({ path, count })

/** Feeds records until the collector asks to stop; returns how many it took. */
function feed (collector: { onRecord(r: Buffer): boolean }, records: Buffer[]): number {
  for (let i = 0; i < records.length; i++) if (!collector.onRecord(records[i])) return i + 1
  return records.length
}

const shown = (window: { lines: Array<{ line: number, match: boolean }> } | undefined) => window?.lines.map(l => `${l.line}${l.match ? ':' : '-'}`)

t.test('the matches before a window are counted, not kept; the lines around it are; it stops once every window is whole', async (t) => {
  const a = entry('a.txt', 6)
  const c = windowCollector(s => s, [{ entry: a, from: 3, to: 4 }], 1, 1e6)
  const records = [begin('a.txt'), ...[1, 2, 3].map(n => line('match', 'a.txt', n)), line('context', 'a.txt', 4), line('match', 'a.txt', 5), line('context', 'a.txt', 6), line('match', 'a.txt', 8), end('a.txt')]

  const taken = feed(c, records)

  t.equal(taken, 7, 'stopped after the line below the window, before the rest of the file')
  const w = c.windows(false).get(a)
  t.same(shown(w), ['4-', '5:', '6-'])
  t.match(w, { first: 3, whole: true })
})

t.test('records that are not ripgrep\'s JSON are skipped wherever they come; a begin that does not parse owns nothing', async (t) => {
  const a = entry('a.txt', 3)
  const c = windowCollector(s => s, [{ entry: a, from: 1, to: 3 }], 2, 1e6)
  // A cut context record: counted as a line by its first bytes (a match would be counted too), never shown.
  const junk = Buffer.from('{"type":"context","data":')

  const records = [begin('a.txt'), junk, line('match', 'a.txt', 1), line('match', 'a.txt', 2), junk, line('match', 'a.txt', 3), junk, line('context', 'a.txt', 4), line('match', 'a.txt', 9), end('a.txt')]

  const taken = feed(c, records)

  t.equal(taken, 9, 'a line past the last match\'s context ends the window')
  const w = c.windows(false).get(a)
  t.same(shown(w), ['1:', '2:', '3:', '4-'], 'the ring\'s junk and the window\'s are dropped')
  t.match(w, { first: 0, whole: true })
})

t.test('files the page does not want are passed over; a file that ends before its window is whole with what it had', async (t) => {
  const a = entry('dir/a.txt', 5)
  const b = entry('dir/b.txt', 2)
  const c = windowCollector(s => `dir/${s}`, [{ entry: a, from: 0, to: 5 }, { entry: b, from: 0, to: 2 }], 0, 1e6)

  const notJson = Buffer.from('{"type":"begin","data":')
  const going = [begin('x.txt'), line('match', 'x.txt', 1), end('x.txt'), notJson, line('match', 'a.txt', 1), begin('b.txt'), line('match', 'b.txt', 7)].map(r => c.onRecord(r))
  const last = c.onRecord(line('match', 'b.txt', 8))

  t.same(going, [true, true, true, true, true, true, true])
  t.equal(c.windows(false).get(a)?.lines.length, 0, 'after a begin that does not parse, the lines are nobody\'s')
  t.equal(last, true, 'one window is still open (a.txt never came)')
  t.same(shown(c.windows(false).get(b)), ['7:', '8:'])
  t.equal(c.windows(false).get(a)?.whole, false, 'a.txt is not whole unless the run was complete')
  t.equal(c.windows(true).get(a)?.whole, true)
  t.equal([begin('a.txt'), line('match', 'a.txt', 1), end('a.txt')].map(r => c.onRecord(r)).join(), 'true,true,false', 'a.txt ends before its window: whole with what it had, and the last window closed')
  t.same(shown(c.windows(false).get(a)), ['1:'])
  t.equal(c.windows(false).get(a)?.whole, true)
  t.equal(c.sawSummary, false)
  t.equal(c.onRecord(Buffer.from('{"data":{"elapsed_total":{"secs":0,"nanos":1},"stats":{}},"type":"summary"}')), true)
  t.equal(c.sawSummary, true)
})

t.test('past its byte budget the read stops, after the window\'s first match, and says so', async (t) => {
  const a = entry('a.txt', 10)
  const c = windowCollector(s => s, [{ entry: a, from: 2, to: 10 }], 0, 100)

  const taken = feed(c, [begin('a.txt'), ...Array.from({ length: 10 }, (_, i) => line('match', 'a.txt', i + 1, 'x'.repeat(30)))])

  t.equal(taken, 4, 'the first wanted match alone passes 100 bytes: kept, then stop')
  t.equal(c.overBudget, true)
  t.same(shown(c.windows(false).get(a)), ['3:'])
  t.equal(c.windows(false).get(a)?.whole, false)
})

t.test('a line too long to hold is scanned for what is shown, in the window or before it; none is scanned for a file not wanted', async (t) => {
  const a = entry('a.txt', 3)
  const c = windowCollector(s => s, [{ entry: a, from: 1, to: 3 }], 1, 1e6)
  const long = (record: Buffer): boolean | undefined => {
    const sink = c.onLongRecord()
    for (let at = 0; at < record.length; at += 1000) sink.push(record.subarray(at, at + 1000))
    return sink.end()
  }

  long(line('match', 'a.txt', 1, 'y'.repeat(100_000)))
  c.onRecord(begin('a.txt'))
  long(line('match', 'a.txt', 1, 'y'.repeat(100_000)))
  long(line('match', 'a.txt', 2, 'z'.repeat(100_000)))
  long(Buffer.from(JSON.stringify({ type: 'begin', data: { path: { text: 'a.txt' }, pad: 'p'.repeat(100_000) } })))
  const last = c.onRecord(line('match', 'a.txt', 3))

  t.equal(last, true, 'the after-context of one line is still to come')
  const w = c.windows(false).get(a)
  t.same(w?.lines.map(l => [l.line, l.text.length, l.length]), [[1, 2000, 100_000], [2, 2000, 100_000], [3, 6, 6]])
  t.equal(w?.first, 0, 'the long match before the window is its context, and counted')
})
