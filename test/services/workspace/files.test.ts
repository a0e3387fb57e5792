import t from 'tap'
import fc from 'fast-check'
import { runs } from '../../helpers/property.js'
import { writeFileSync } from 'node:fs'
import { open } from 'node:fs/promises'
import path from 'node:path'
import { countLines, LINE_KEEP_BYTES, readLineWindow } from '../../../src/services/workspace/file-lines.js'
import { displayName, parseName as unescapeBytes } from '../../../src/services/workspace/path-names.js'
import { BIG_LINES, bigLine, hostileServices } from '../../helpers/workspace-fixture.js'

t.test('displayName escapes only the bytes that are not UTF-8, and unescapeBytes inverts it', async (t) => {
  const samples = [Buffer.from('plain.txt'), Buffer.from('unicodé-日本.txt'), Buffer.from([0x61, 0xff, 0x62]), Buffer.from([0xe6, 0x97, 0x65]), Buffer.from('\uFFFD.txt')]

  for (const bytes of samples) t.same(unescapeBytes(displayName(bytes)), bytes, displayName(bytes))
  t.equal(displayName(Buffer.from([0x61, 0xff, 0x62])), 'a\\xffb')
  t.equal(displayName(Buffer.from('\uFFFD.txt')), '\uFFFD.txt')
})

t.test('readLines: UTF-16 with a BOM is decoded, invalid UTF-8 is flagged, binary is sniffed', async (t) => {
  const fx = await hostileServices(t, { big: false })
  const ws = fx.workspace
  writeFileSync(path.join(fx.root, 'utf16.txt'), Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('one\ntwo\n', 'utf16le')]))
  writeFileSync(path.join(fx.root, 'utf16be.txt'), Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from('hi\n', 'utf16le').swap16()]))
  writeFileSync(path.join(fx.root, 'latin1.txt'), Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]))

  const read = async (name: string, start = 1) => {
    const handle = await ws.openFile(await ws.resolve(name))
    try {
      const sniff = await ws.sniff(handle)
      const { size } = await handle.stat()
      return { sniff, window: await ws.readLines(handle, size, sniff, { start, maxLines: 10 }) }
    } finally {
      await handle.close()
    }
  }

  t.match(await read('utf16.txt'), { sniff: { binary: false, encoding: 'utf16le' }, window: { lines: ['one', 'two'], totalLines: 2 } })
  t.match(await read('utf16be.txt'), { sniff: { encoding: 'utf16be' }, window: { lines: ['hi'] } })
  t.match(await read('latin1.txt'), { sniff: { charset: 'windows-1252', detected: true }, window: { lines: ['café'], invalidUtf8: false } }, 'too short to detect: read as windows-1252')
  t.match(await read('binary.bin'), { sniff: { binary: true } })
  t.match(await read('src/app.ts', -1), { window: { lines: ['}'], first: 3, totalLines: 3 } })
})

t.test('readLines streams a window out of a 20 MB file and counts its lines', async (t) => {
  const fx = await hostileServices(t)
  const ws = fx.workspace
  const handle = await ws.openFile(await ws.resolve('big.txt'))
  t.teardown(() => handle.close())
  const { size } = await handle.stat()
  const sniff = await ws.sniff(handle)

  const head = await ws.readLines(handle, size, sniff, { start: 1, end: 2, maxLines: 10 })
  const tail = await ws.readLines(handle, size, sniff, { start: -3, maxLines: 2 })
  const capped = await ws.readLines(handle, size, sniff, { start: 10_000, maxLines: 3 })

  t.same(head, { lines: [bigLine(1), bigLine(2)], first: 1, totalLines: BIG_LINES, invalidUtf8: false })
  t.same(tail.lines, [bigLine(BIG_LINES - 2), bigLine(BIG_LINES - 1)])
  t.equal(tail.first, BIG_LINES - 2)
  t.same(capped.lines, [bigLine(10_000), bigLine(10_001), bigLine(10_002)])
  t.equal(await ws.countLines(handle, size), BIG_LINES)
})

t.test('walk: bounded by maxEntries, stops on abort, never follows links', async (t) => {
  const fx = await hostileServices(t, { big: false })
  const ws = fx.workspace
  const start = await ws.resolve('.')

  const capped = await ws.walk({ start, maxDepth: 5, includeHidden: true, respectGitignore: false, maxEntries: 5 })
  t.equal(capped.entries.length, 5)
  t.ok(capped.truncated)
  t.match(capped.notes, [/stopped after 5 entries/])

  const controller = new AbortController()
  controller.abort()
  const aborted = await ws.walk({ start, maxDepth: 5, includeHidden: true, respectGitignore: false, maxEntries: 1000, signal: controller.signal })
  t.equal(aborted.entries.length, 0)
  t.ok(aborted.truncated)

  const all = await ws.walk({ start, maxDepth: 5, includeHidden: true, respectGitignore: false, maxEntries: 10_000, resolveLinks: true })
  t.notOk(all.entries.some(e => e.relative.startsWith('link-to-outside-dir/') || e.relative.startsWith('loopdir/up/')), 'links are not entered')
  t.match(all.entries.find(e => e.relative === 'loopdir/up'), { kind: 'symlink', link: { state: 'inside', relative: '.' } })
})

/** The reference reader: the whole file decoded and split (what readLines did before it streamed). */
function referenceWindow (bytes: Buffer, encoding: 'utf8' | 'utf16le' | 'utf16be', req: { start: number, end?: number, maxLines: number }) {
  const body = encoding === 'utf8' ? bytes : bytes.subarray(2, 2 + ((bytes.length - 2) & ~1))
  const text = encoding === 'utf8' ? body.toString('utf8') : encoding === 'utf16le' ? body.toString('utf16le') : Buffer.from(body).swap16().toString('utf16le')
  const all = text.split('\n')
  if (all[all.length - 1] === '') all.pop()
  const from = req.start < 0 ? Math.max(1, all.length + req.start + 1) : Math.max(1, req.start)
  const last = req.end === undefined ? all.length : Math.min(all.length, req.end)
  const to = Math.min(last, from + req.maxLines - 1)
  return { lines: all.slice(from - 1, to).map(l => l.endsWith('\r') ? l.slice(0, -1) : l), first: from, totalLines: all.length }
}

t.test('readLines streams: any text, any encoding, any window gives what a whole-file decode would', async (t) => {
  const dir = t.testdir({})
  const pieces = ['a', 'é', '日', '😀', ' ', '\t', '\r', '\n', '\r\n', '\n\n', '\u0a0a', '\u010a', '\u0d0a', 'x'.repeat(50)]
  const texts = fc.array(fc.constantFrom(...pieces), { maxLength: 40 }).map(a => a.join(''))
  const encodings = fc.constantFrom('utf8' as const, 'utf16le' as const, 'utf16be' as const)
  const requests = fc.record({ start: fc.integer({ min: -12, max: 12 }), end: fc.option(fc.integer({ min: 1, max: 14 }), { nil: undefined }), maxLines: fc.integer({ min: 1, max: 6 }) })
  let n = 0
  await fc.assert(fc.asyncProperty(texts, encodings, requests, async (text, encoding, req) => {
    const bytes = encoding === 'utf8'
      ? Buffer.from(text)
      : Buffer.concat([Buffer.from(encoding === 'utf16le' ? [0xff, 0xfe] : [0xfe, 0xff]), encoding === 'utf16le' ? Buffer.from(text, 'utf16le') : Buffer.from(text, 'utf16le').swap16()])
    const file = path.join(dir, `f${n++}`)
    writeFileSync(file, bytes)
    const handle = await open(file)
    try {
      const window = await readLineWindow(handle, bytes.length, { binary: false, encoding, head: Buffer.alloc(0) }, { ...req, start: req.start === 0 ? 1 : req.start })
      const expected = referenceWindow(bytes, encoding, { ...req, start: req.start === 0 ? 1 : req.start })
      t.same({ lines: window.lines, first: window.first, totalLines: window.totalLines }, expected)
      t.equal(await countLines(handle, bytes.length, undefined, encoding), expected.totalLines)
      t.notOk(window.invalidUtf8)
      return true
    } finally {
      await handle.close()
    }
  }), runs(300))
})

t.test('readLines keeps at most LINE_KEEP_BYTES of a line, cut on a character, and reports its whole length', async (t) => {
  const dir = t.testdir({})
  const cases: Array<{ name: string, bytes: Buffer, encoding: 'utf8' | 'utf16le' | 'utf16be', unit: string }> = [
    { name: 'ascii', bytes: Buffer.from('short\n' + 'x'.repeat(3_000_000) + '\r\nafter\n'), encoding: 'utf8', unit: 'x' },
    // 3-byte characters: 8192 is not a multiple of 3, so a naive cut would leave half a character.
    { name: 'cjk', bytes: Buffer.from('short\n' + '日'.repeat(1_000_000) + '\nafter\n'), encoding: 'utf8', unit: '日' },
    // Surrogate pairs in UTF-16: 8192 bytes is 2048 pairs exactly, the pair must not be split either way.
    { name: 'emoji16', bytes: Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('short\n a' + '😀'.repeat(300_000) + '\nafter\n', 'utf16le')]), encoding: 'utf16le', unit: '😀' }
  ]
  for (const c of cases) {
    const file = path.join(dir, c.name)
    writeFileSync(file, c.bytes)
    const handle = await open(file)
    try {
      const window = await readLineWindow(handle, c.bytes.length, { binary: false, encoding: c.encoding, head: Buffer.alloc(0) }, { start: 1, maxLines: 10 })
      t.equal(window.totalLines, 3, c.name)
      t.equal(window.lines[0], 'short')
      t.equal(window.lines[2], 'after')
      const long = window.lines[1]
      t.ok(Buffer.byteLength(long, c.encoding === 'utf8' ? 'utf8' : 'utf16le') <= LINE_KEEP_BYTES, `${c.name}: at most ${LINE_KEEP_BYTES} bytes kept`)
      t.ok(long.length >= 2001, `${c.name}: the kept text reaches past the display cut`)
      t.notOk(long.includes('\uFFFD'), `${c.name}: no half character at the cut`)
      t.notOk(window.invalidUtf8)
      t.equal(long.slice(-c.unit.length), c.unit, `${c.name}: ends on a whole character`)
      const whole = c.bytes.toString(c.encoding === 'utf8' ? 'utf8' : 'utf16le').split('\n')[1]
      const wholeBytes = c.encoding === 'utf8' ? Buffer.byteLength(whole.replace(/\r$/, '')) + (whole.endsWith('\r') ? 1 : 0) : whole.length * 2
      t.strictSame(window.longLines, new Map([[1, wholeBytes]]), `${c.name}: the whole line's length is reported`)
    } finally {
      await handle.close()
    }
  }
})

t.test('readLines: chunk edges inside a character or a UTF-16 line feed; invalid UTF-8 in the window is flagged', async (t) => {
  const dir = t.testdir({})
  const MB = 1024 * 1024
  // 'é' straddles the 1 MB chunk edge; then a line with an invalid byte.
  const utf8 = Buffer.concat([Buffer.from('a'.repeat(MB - 1)), Buffer.from('é\nok\n'), Buffer.from([0x62, 0xff, 0x0a])])
  writeFileSync(path.join(dir, 'u8'), utf8)
  let handle = await open(path.join(dir, 'u8'))
  let window = await readLineWindow(handle, utf8.length, { binary: false, encoding: 'utf8', head: Buffer.alloc(0) }, { start: 2, maxLines: 5 })
  await handle.close()
  t.same(window.lines, ['ok', 'b\uFFFD'])
  t.ok(window.invalidUtf8)
  // UTF-16LE: the line feed is the last code unit of the first 1 MB chunk (chunks start after the BOM).
  const utf16 = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('b'.repeat(MB / 2 - 2) + '\n' + 'c\n', 'utf16le')])
  writeFileSync(path.join(dir, 'u16'), utf16)
  handle = await open(path.join(dir, 'u16'))
  window = await readLineWindow(handle, utf16.length, { binary: false, encoding: 'utf16le', head: Buffer.alloc(0) }, { start: -1, maxLines: 5 })
  await handle.close()
  t.same({ lines: window.lines, totalLines: window.totalLines }, { lines: ['c'], totalLines: 2 })
})

t.test('readLines stops when the signal aborts (every chunk), countLines returns without finishing', async (t) => {
  const fx = await hostileServices(t)
  const handle = await fx.workspace.openFile(await fx.workspace.resolve('big.txt'))
  t.teardown(() => handle.close())
  const { size } = await handle.stat()
  const controller = new AbortController()
  controller.abort(new Error('deadline passed'))
  await t.rejects(readLineWindow(handle, size, { binary: false, encoding: 'utf8', head: Buffer.alloc(0) }, { start: 5, maxLines: 2, signal: controller.signal }), { message: 'deadline passed' })
  await t.rejects(readLineWindow(handle, size, { binary: false, encoding: 'utf8', head: Buffer.alloc(0) }, { start: -5, maxLines: 2, signal: controller.signal }), { message: 'deadline passed' })
  t.equal(await countLines(handle, size, controller.signal), 0)
})
