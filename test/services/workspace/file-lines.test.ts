import t, { type Test } from 'tap'
import { writeFileSync } from 'node:fs'
import { open } from 'node:fs/promises'
import path from 'node:path'
import fc from 'fast-check'
import { countLines, LINE_KEEP_BYTES, readLineWindow } from '../../../src/services/workspace/file-lines.js'
import { runs } from '../../helpers/property.js'

// Cuts of long lines on every kind of character boundary, and files that change size under the reader.

async function windowOf (t: Test, name: string, bytes: Buffer, encoding: 'utf8' | 'utf16le', size = bytes.length) {
  const file = path.join(t.testdir({}), name)
  writeFileSync(file, bytes)
  const handle = await open(file)
  t.teardown(() => handle.close())
  return await readLineWindow(handle, size, { binary: false, encoding, head: Buffer.alloc(0) }, { start: 1, maxLines: 10 })
}

t.test('a long line of 2- or 4-byte characters is cut between characters, whatever the alignment', async (t) => {
  for (const unit of ['é', '😀']) {
    const window = await windowOf(t, `line-${unit.length}`, Buffer.from('x' + unit.repeat(6000) + '\n'), 'utf8')

    const kept = window.lines[0]
    t.ok(Buffer.byteLength(kept) <= LINE_KEEP_BYTES)
    t.equal(kept.slice(-unit.length), unit)
    t.notOk(kept.includes('\uFFFD'))
  }
})

t.test('a long UTF-16 line cut after the first half of a surrogate pair drops that half', async (t) => {
  // Three code units before the pairs: the 8 KiB cut lands between a high and a low surrogate.
  const window = await windowOf(t, 'emoji16', Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(' ab' + '😀'.repeat(5000) + '\n', 'utf16le')]), 'utf16le')

  const kept = window.lines[0]
  t.equal(kept.slice(-2), '😀', 'ends on a whole pair')
  t.equal(kept.length % 2, 1, 'three units and whole pairs')
})

t.test('a long line of bytes that are not UTF-8 is kept to the byte and flagged', async (t) => {
  const window = await windowOf(t, 'bad8', Buffer.concat([Buffer.alloc(10_000, 0xff), Buffer.from('\n')]), 'utf8')

  t.equal(window.invalidUtf8, true)
  t.equal(window.lines[0].length, LINE_KEEP_BYTES, 'one replacement character per kept byte')
})

t.test('a file that shrank after its size was taken reads what is there', async (t) => {
  const utf8 = await windowOf(t, 'short8', Buffer.from('one\ntwo\n'), 'utf8', 100)
  // UTF-16 with an odd last byte: the reader must still move on (it once re-read that byte forever).
  const utf16 = await windowOf(t, 'short16', Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('one\ntwo', 'utf16le'), Buffer.from([0x41])]), 'utf16le', 100)

  t.strictSame(utf8.lines, ['one', 'two'])
  t.strictSame(utf16.lines, ['one', 'two'])
})

t.test('countLines rethrows a failure that is not its caller giving up', async (t) => {
  const file = path.join(t.testdir({ 'a.txt': 'a\nb\n' }), 'a.txt')
  const handle = await open(file)
  await handle.close()

  await t.rejects(countLines(handle, 4), { code: 'EBADF' })
})

t.test('a whole UTF-8 file read in one piece gives what the streaming pass gives: lines, count, cuts, the invalid flag (any bytes)', async (t) => {
  const dir = t.testdir({})
  const file = path.join(dir, 'whole.txt')
  // Lines of ASCII, CR, multi-byte and broken UTF-8, now and then one past LINE_KEEP_BYTES (the streaming pass cuts it).
  const piece = fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom('a', 'xyz ', '\n', '\r\n', '\r', 'é', '😀', '\uFFFD', '\uFEFF') },
    { weight: 1, arbitrary: fc.constantFrom(Buffer.from([0xff]), Buffer.from([0xe2, 0x82]), Buffer.from([0xf0, 0x9f, 0x98])) },
    { weight: 1, arbitrary: fc.integer({ min: LINE_KEEP_BYTES - 4, max: LINE_KEEP_BYTES + 4 }).map(n => 'é'.repeat(n >> 1) + 'q'.repeat(n & 1)) }
  )
  await fc.assert(fc.asyncProperty(fc.array(piece, { maxLength: 60 }), async (pieces) => {
    const bytes = Buffer.concat(pieces.map(p => typeof p === 'string' ? Buffer.from(p) : p))
    writeFileSync(file, bytes)
    const handle = await open(file)
    try {
      const sniff = { binary: false, encoding: 'utf8' as const, head: Buffer.alloc(0) }
      const whole = await readLineWindow(handle, bytes.length, sniff, { start: 1, maxLines: Number.MAX_SAFE_INTEGER })
      // At most one line per byte: a window of `size` lines is the whole file, read by the streaming pass.
      const streamed = await readLineWindow(handle, bytes.length, sniff, { start: 1, maxLines: Math.max(bytes.length, 1) })
      t.strictSame(whole, streamed)
    } finally {
      await handle.close()
    }
  }), runs(150))

  writeFileSync(file, 'one\r\ntwo\n')
  const handle = await open(file)
  t.teardown(() => handle.close())
  t.strictSame((await readLineWindow(handle, 100, { binary: false, encoding: 'utf8', head: Buffer.alloc(0) }, { start: 1, maxLines: Number.MAX_SAFE_INTEGER })).lines, ['one', 'two'], 'a file that shrank after its size was taken: what is there')
  const aborted = new AbortController()
  aborted.abort(new Error('gave up'))
  await t.rejects(readLineWindow(handle, 9, { binary: false, encoding: 'utf8', head: Buffer.alloc(0) }, { start: 1, maxLines: Number.MAX_SAFE_INTEGER, signal: aborted.signal }), /gave up/, 'a caller that gave up gets no read')
})
