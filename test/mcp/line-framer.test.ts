import t from 'tap'
import fc from 'fast-check'
import { runs } from '../helpers/property.js'
import { LineFramer, type Frame } from '../../src/mcp/wire/line-framer.js'

const MAX = 32

/** What the framer must report for a byte stream, computed the plain way (split on \n). */
function model (input: Buffer, max: number): string[] {
  const out: string[] = []
  const parts: Buffer[] = []
  let start = 0
  for (let i = input.indexOf(0x0a); i !== -1; i = input.indexOf(0x0a, start)) {
    parts.push(input.subarray(start, i))
    start = i + 1
  }
  for (const part of parts) {
    const line = part.length > 0 && part[part.length - 1] === 0x0d ? part.subarray(0, -1) : part
    if (line.length > max) out.push('too-large')
    else if (!/^[ \t\r]*$/.test(line.toString('latin1'))) out.push(`line:${line.toString('hex')}`)
  }
  // An unterminated tail is never a message, but one already known to be too large is reported.
  if (input.length - start > max + 1) out.push('too-large')
  return out
}

// `dropped` (the size of an over-long line, once its newline arrives) is checked on its own below.
const show = (frames: Frame[]): string[] => frames.flatMap(f => f.kind === 'line' ? [`line:${f.bytes.toString('hex')}`] : f.kind === 'too-large' ? ['too-large'] : [])

/** Feeds `input` in chunks cut at `cuts`; checks the memory bound after every chunk. */
function feed (input: Buffer, cuts: number[], max: number): { frames: string[], peak: number } {
  const framer = new LineFramer(max)
  const frames: string[] = []
  // One buffer for every chunk, overwritten after each push, as a reader that reuses its buffer does:
  // the framer must keep no reference to a chunk.
  const reused = Buffer.alloc(input.length)
  let peak = 0
  let at = 0
  for (const cut of [...new Set(cuts.map(c => c % (input.length + 1)))].sort((a, b) => a - b).concat(input.length)) {
    const chunk = reused.subarray(0, cut - at)
    input.copy(chunk, 0, at, cut)
    frames.push(...show(framer.push(chunk)))
    reused.fill(0x0a)
    peak = Math.max(peak, framer.buffered)
    at = cut
  }
  return { frames, peak }
}

// A line is text (any code points, so multi-byte UTF-8 gets split by the cuts), a short or long
// run of one byte, or blank; lines are joined by \n or \r\n.
const lineArb = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 20 }).map(s => s.replace(/[\r\n]/g, '')),
  fc.tuple(fc.integer({ min: MAX - 2, max: MAX * 4 }), fc.constantFrom('x', 'é', ' ')).map(([n, c]) => c.repeat(n)),
  fc.constantFrom('', ' ', '\t \t', '{"jsonrpc":"2.0","id":1,"method":"ping"}')
)
const streamArb = fc.tuple(
  fc.array(fc.tuple(lineArb, fc.constantFrom('\n', '\r\n')), { maxLength: 12 }),
  fc.option(lineArb, { nil: undefined })
).map(([lines, tail]) => Buffer.from(lines.map(([l, eol]) => l + eol).join('') + (tail ?? '')))

t.test('any chunking of any line sequence frames like a plain split, and holds at most the cap', async (t) => {
  fc.assert(fc.property(streamArb, fc.array(fc.nat(), { maxLength: 40 }), (input, cuts) => {
    const { frames, peak } = feed(input, cuts, MAX)
    return JSON.stringify(frames) === JSON.stringify(model(input, MAX)) && peak <= MAX + 1
  }), runs(1000))
  t.pass('1000 streams framed as the model says')
})

t.test('an over-long line is rejected whole: one error, and its tail is never a message', async (t) => {
  // The old framer dropped the buffered head at the cap and parsed the tail as a second message.
  const framer = new LineFramer(16)
  const frames = [
    ...framer.push(Buffer.from('{"jsonrpc":"2.0","pad":"xxxxxxxxxxxxxxx')),
    ...framer.push(Buffer.from('","id":1,"method":"ping"}\n{"id":2}\n'))
  ]

  t.strictSame(show(frames), ['too-large', `line:${Buffer.from('{"id":2}').toString('hex')}`])
})

t.test('a line of exactly the cap is accepted, with \\n or \\r\\n; one byte more is not', async (t) => {
  const framer = new LineFramer(4)

  const frames = framer.push(Buffer.from('abcd\nabcd\r\nabcde\r\nab\r\n'))

  t.strictSame(show(frames), ['line:61626364', 'line:61626364', 'too-large', 'line:6162'])
})

t.test('a multi-byte character split across chunks arrives intact', async (t) => {
  const bytes = Buffer.from('"héllo ✓"\n')
  const framer = new LineFramer(64)

  const frames = [...framer.push(bytes.subarray(0, 3)), ...framer.push(bytes.subarray(3, 10)), ...framer.push(bytes.subarray(10))]

  t.equal(frames.length, 1)
  t.equal((frames[0] as { bytes: Buffer }).bytes.toString('utf8'), '"héllo ✓"')
})

t.test('bytes of an over-long line are dropped as they come, however many chunks it takes', async (t) => {
  const framer = new LineFramer(1024)
  const chunk = Buffer.alloc(65536, 0x78)
  let errors = 0
  let peak = 0
  for (let i = 0; i < 64; i++) {
    errors += framer.push(chunk).length
    peak = Math.max(peak, framer.buffered)
  }
  const after = framer.push(Buffer.from('\n{"ok":1}\n'))

  t.equal(errors, 1, 'one error for the whole line')
  t.equal(peak, 0, 'nothing is held once the line is known to be too large')
  t.strictSame(show(after), [`line:${Buffer.from('{"ok":1}').toString('hex')}`])
})

t.test('an over-long line is reported with its size once its newline arrives (a CR before it counted, the LF not)', async (t) => {
  const framer = new LineFramer(8)

  const early = framer.push(Buffer.from('0123456789'))
  const rest = framer.push(Buffer.from('abc\r\nok\n'))
  const whole = framer.push(Buffer.from('0123456789\nx\n'))

  t.strictSame(early, [{ kind: 'too-large' }], 'answered as soon as it is known')
  t.strictSame(rest.slice(0, 1), [{ kind: 'dropped', bytes: 14 }])
  t.strictSame(show(rest), ['line:6f6b'])
  t.strictSame(whole.slice(0, 2), [{ kind: 'too-large' }, { kind: 'dropped', bytes: 10 }], 'a line over the cap inside one chunk')
})

t.test('a line held across chunks is copied, into a buffer that grows only as far as the cap', async (t) => {
  const framer = new LineFramer(200_000)
  const part = Buffer.alloc(50_000, 0x61)

  for (let i = 0; i < 3; i++) framer.push(part)
  const held = framer.buffered
  const [frame] = framer.push(Buffer.from('\n'))

  t.equal(held, 150_000)
  t.equal(frame.kind === 'line' && frame.bytes.length, 150_000)
  t.equal(framer.buffered, 0)
})
