import t from 'tap'
import { writeFileSync } from 'node:fs'
import path from 'node:path'
import { displayName, unescapeBytes } from '../../src/services/path-names.js'
import { BIG_LINES, bigLine, hostileServices } from '../helpers/workspace-fixture.js'

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
  t.match(await read('latin1.txt'), { window: { lines: ['caf\uFFFD'], invalidUtf8: true } })
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
