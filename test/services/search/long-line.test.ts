import t from 'tap'
import fc from 'fast-check'
import { createLongRecordScanner } from '../../../src/services/search/long-line.js'
import { MAX_LINE_CHARS, parseRgJson } from '../../../src/services/search/parse.js'
import { runs } from '../../helpers/property.js'

// The scanner sees one over-long `rg --json` record piece by piece and keeps only its head, the first
// characters of the line and the line number: what it gives must agree with parsing the whole record.

/** A `rg --json` match/context record as ripgrep 15 writes it (lines before line_number, submatches last). */
function record (type: 'match' | 'context', path: string, lines: Record<string, string>, lineNumber: number | null, submatches = 0): string {
  const subs = Array.from({ length: submatches }, (_, i) => ({ match: { text: 'x' }, start: i, end: i + 1 }))
  return `{"type":"${type}","data":{"path":{"text":${JSON.stringify(path)}},"lines":${JSON.stringify(lines)},"line_number":${JSON.stringify(lineNumber)},"absolute_offset":0,"submatches":${JSON.stringify(subs)}}}`
}

/** Feeds `text` to a fresh scanner in pieces cut at `cuts` (byte offsets, any order) and ends it. */
function scan (text: string | Buffer, cuts: number[] = []) {
  const bytes = Buffer.isBuffer(text) ? text : Buffer.from(text)
  const at = [...new Set(cuts.map(c => c % (bytes.length + 1)))].sort((a, b) => a - b)
  const scanner = createLongRecordScanner()
  let from = 0
  for (const cut of [...at, bytes.length]) {
    if (cut > from) scanner.push(bytes.subarray(from, cut))
    from = Math.max(from, cut)
  }
  return scanner.end()
}

const char = fc.constantFrom('a', 'Z', ' ', '\t', '"', '\\', 'é', '日', '😀', '\u0001', '\u2028', '/', '<')
const longLine = fc.array(char, { minLength: MAX_LINE_CHARS - 20, maxLength: MAX_LINE_CHARS * 3 }).map(cs => cs.join(''))

t.test('any long line, cut into any pieces, gives what parsing the whole record gives', async (t) => {
  fc.assert(fc.property(longLine, fc.constantFrom('\n', '\r\n', ''), fc.constantFrom<'match' | 'context'>('match', 'context'), fc.array(fc.nat(), { maxLength: 12 }), fc.integer({ min: 1, max: 1e6 }), (line, ending, type, cuts, n) => {
    const text = record(type, `./src/f${n}.ts`, { text: line + ending }, n)
    const whole = parseRgJson(Buffer.from(text))
    const got = scan(text, cuts)
    if (whole.type !== 'line' || got?.type !== 'line') return false
    return got.path === whole.path && got.line.line === n && got.line.match === (type === 'match') &&
      got.line.length === whole.line.length && got.line.text === line.slice(0, MAX_LINE_CHARS) && got.line.start === 0
  }), runs(300))
  t.pass('scanner agrees with the whole-record parse')
})

t.test('a line that is not UTF-8 arrives as base64 bytes: its start is decoded, its length counted in bytes', async (t) => {
  const raw = Buffer.concat([Buffer.from('héllo '.repeat(1000)), Buffer.from([0xff, 0xfe]), Buffer.from(' end\n')])
  const text = record('match', './bin/blob', { bytes: raw.toString('base64') }, 7, 3)

  const got = scan(text, [5, 70, 9000])

  t.match(got, { type: 'line', path: 'bin/blob', line: { line: 7, match: true, start: 0 } })
  if (got?.type !== 'line') return
  t.equal(got.line.text, 'héllo '.repeat(1000).slice(0, MAX_LINE_CHARS))
  t.equal(got.line.length, Math.floor(raw.toString('base64').length * 3 / 4))
})

t.test('a record with nothing to show gives no event', async (t) => {
  const line = 'x'.repeat(MAX_LINE_CHARS * 2)
  const cases: Record<string, string> = {
    'a path longer than the head holds, so no `lines` field is seen': `{"type":"match","data":{"path":{"text":"${'p'.repeat(70 * 1024)}"},"lines":{"text":"${line}"},"line_number":1}}`,
    'a `lines` object with neither text nor bytes': '{"type":"match","data":{"path":{"text":"a"},"lines":{"other":"' + line + '"},"line_number":1}}',
    'a record of another type': `{"type":"summary","data":{"path":{"text":"a"},"lines":{"text":"${line}"},"line_number":1}}`,
    'a head that is not JSON': `{"type":"match","data":{"path":{"text":"a"},"x":[1,"lines":{"text":"${line}"},"line_number":1}}`,
    'a record cut inside its line': `{"type":"match","data":{"path":{"text":"a"},"lines":{"text":"${line}`
  }
  for (const [name, text] of Object.entries(cases)) t.equal(scan(text, [3, 40_000]), undefined, name)
})

t.test('a missing line number reads as 0, and an empty line as empty text', async (t) => {
  const noNumber = scan(record('context', 'a.txt', { text: 'y'.repeat(5000) + '\n' }, null))
  const empty = scan(record('match', 'a.txt', { text: '' }, 3, 5000))

  t.match(noNumber, { line: { line: 0, length: 5000, match: false } })
  t.match(empty, { line: { line: 3, text: '', length: 0 } })
})

t.test('a whole record in one piece larger than the head is scanned in one go', async (t) => {
  const line = 'q'.repeat(100_000)
  const got = scan(record('match', 'big.txt', { text: line + '\n' }, 2))
  // And a short string ending inside the first piece: the rest of that piece is the tail (line_number).
  const short = scan(record('match', 'short.txt', { text: 'ab\n' }, 9, 20_000))

  t.match(got, { line: { line: 2, length: 100_000, text: line.slice(0, MAX_LINE_CHARS) } })
  t.match(short, { line: { line: 9, text: 'ab', length: 2 } })
})

t.test('a kept prefix that ends inside an escape or a character drops the broken end', async (t) => {
  // Each U+0001 is 6 bytes of JSON (\\u0001): the kept bytes end in the middle of one.
  const controls = scan(record('match', 'c.txt', { text: '\u0001'.repeat(2100) + '\n' }, 1))
  const emoji = scan(record('match', 'e.txt', { text: '😀'.repeat(4000) + '\n' }, 1))

  t.match(controls, { line: { text: '\u0001'.repeat(MAX_LINE_CHARS), length: 2100 } })
  t.match(emoji, { line: { length: 8000 } })
  if (emoji?.type === 'line') t.notMatch(emoji.line.text, /\uFFFD/, 'no replacement character from a cut sequence')
})
