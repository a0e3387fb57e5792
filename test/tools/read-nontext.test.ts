import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import fc from 'fast-check'
import '../helpers/property.js'
import iconv from 'iconv-lite'
import pino from 'pino'
import t, { type Test } from 'tap'
import { createLimiter } from '../../src/services/limiter.js'
import { createPdfReader, locatePdfjs } from '../../src/services/workspace/pdf-text.js'
import { createSearch } from '../../src/services/search/search.js'
import { createTokenizer } from '../../src/services/tokenizer/tokenizer.js'
import { createWorkspace, type WorkspaceService } from '../../src/services/workspace/workspace.js'
import type { ToolResult } from '../../src/tool-api/define-tool.js'
import { getFileInfo } from '../../src/tools/get-file-info.js'
import { readFiles } from '../../src/tools/read-files.js'
import { searchRegex } from '../../src/tools/search-regex.js'
import { makePdf, makePng } from '../helpers/documents.js'
import { textOf, toolContext } from '../helpers/workspace-fixture.js'

const tokenizer = createTokenizer({ workers: 0 })
const log = pino({ level: 'silent' })

async function workspaceWith (t: Test, files: Record<string, Buffer | string>, pdf?: ReturnType<typeof createPdfReader>): Promise<WorkspaceService> {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'wmcp-nontext-')))
  t.teardown(() => fs.rmSync(root, { recursive: true, force: true }))
  for (const [name, content] of Object.entries(files)) fs.writeFileSync(path.join(root, name), content)
  return await createWorkspace({ root, log, ...(pdf === undefined ? {} : { pdf }) })
}

const read = async (workspace: WorkspaceService, files: Array<Record<string, unknown>>, extra: Record<string, unknown> = {}): Promise<ToolResult> =>
  await readFiles.run({ workspace, tokenizer, files: files as never, ...extra }, toolContext())
const filesOf = (r: ToolResult): Array<Record<string, unknown>> => (r.structuredContent as { files: Array<Record<string, unknown>> }).files

/** A GIF header: image-size and file-type need no more. */
const gif = (w: number, h: number): Buffer => Buffer.concat([Buffer.from('GIF89a'), Buffer.from([w & 0xff, w >> 8, h & 0xff, h >> 8, 0, 0, 0]), Buffer.alloc(20)])

t.test('PDFs: text by pages, page ranges, line windows that continue with the same pages', async (t) => {
  const pages = Array.from({ length: 60 }, (_, i) => `Page ${i + 1} heading\nbody of page ${i + 1}`)
  const ws = await workspaceWith(t, { 'doc.pdf': makePdf(pages), 'broken.pdf': '%PDF-1.4\nthis is not a PDF at all\n' })
  const first = await read(ws, [{ path: 'doc.pdf' }], { max_lines_per_file: 4 })
  t.match(textOf(first), /^### doc\.pdf — lines 1–4 of 150 \([\d.]+ KB, PDF, 60 pages, text of pages 1–50; next pages: read_files files=\[\{"path":"doc\.pdf","pages":"51-60"\}\]\)\n1\t\[page 1\]\n2\tPage 1 heading\n3\tbody of page 1\n4\t\[page 2\]\n… 146 more lines — next: read_files files=\[\{"path":"doc\.pdf","start_line":5\}\]$/)
  t.match(filesOf(first), [{ path: 'doc.pdf', media_type: 'application/pdf', pages: 60, start_line: 1, end_line: 4, next_start_line: 5 }])

  const tail = await read(ws, [{ path: 'doc.pdf', pages: '59-60', start_line: -2 }])
  t.match(textOf(tail), /lines 5–6 of 6 \(.*text of pages 59–60\)\n5\tPage 60 heading\n6\tbody of page 60$/)
  const one = await read(ws, [{ path: 'doc.pdf', pages: '7', start_line: 2, end_line: 2 }])
  t.match(textOf(one), /\n2\tPage 7 heading$/)
  const windowed = await read(ws, [{ path: 'doc.pdf', pages: '3-4' }], { max_lines_per_file: 2 })
  t.match(textOf(windowed), /… 4 more lines — next: read_files files=\[\{"path":"doc\.pdf","start_line":3,"pages":"3-4"\}\]$/)

  const errors = await read(ws, [
    { path: 'doc.pdf', pages: '61-62' }, { path: 'doc.pdf', pages: '1-51' }, { path: 'doc.pdf', pages: '5-2' }, { path: 'doc.pdf', pages: 'all' }, { path: 'broken.pdf' }
  ])
  t.same(filesOf(errors).map(f => f.error), ['INVALID_ARGUMENT', 'INVALID_ARGUMENT', 'INVALID_ARGUMENT', 'INVALID_ARGUMENT', 'BINARY_FILE'])
  t.match(textOf(errors), /"doc\.pdf" has 60 pages; pages starts at 61\. Hint: e\.g\. read_files files=\[\{"path":"doc\.pdf","pages":"1-50"\}\]/)
  t.match(textOf(errors), /files\[1\]\.pages asks for 51 pages, at most 50 per call/)
  t.match(textOf(errors), /files\[3\]\.pages "all" is not a page range\. Hint: e\.g\. files\[3\]\.pages="1-10"/)
  t.match(textOf(errors), /ERROR BINARY_FILE: the PDF could not be read: .*damaged or encrypted/)

  // Any page text is either a range or a clear INVALID_ARGUMENT: never a crash, never a hang.
  await fc.assert(fc.asyncProperty(fc.string({ maxLength: 12 }), async (value) => {
    const r = await read(ws, [{ path: 'doc.pdf', pages: value, end_line: 1 }])
    const [file] = filesOf(r)
    return file.error === undefined || file.error === 'INVALID_ARGUMENT'
  }), { numRuns: 60 })
})

t.test('the PDF reader: missing library, a crashing or stuck extraction, cancellation, size cap', async (t) => {
  t.equal(locatePdfjs(() => { throw new Error('Cannot find module') }), null, 'pdfjs-dist not installed')
  t.match(locatePdfjs(), { pdfjs: /^file:.*pdf\.mjs$/, worker: /^file:.*pdf\.worker\.mjs$/ })
  const missing = await workspaceWith(t, { 'doc.pdf': makePdf(['x']) }, createPdfReader(null))
  t.equal(missing.pdf.available, false)
  t.match(textOf(await read(missing, [{ path: 'doc.pdf' }])), /ERROR BINARY_FILE: PDF text extraction is not installed/)

  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wmcp-pdfjs-'))
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }))
  // A stand-in pdfjs whose import crashes the thread later: the job fails, the next one gets a fresh thread.
  fs.writeFileSync(path.join(dir, 'crash.mjs'), 'setTimeout(() => { throw new Error("boom") }, 10)\nexport const GlobalWorkerOptions = {}\nexport function getDocument () { return { promise: new Promise(() => {}) } }\n')
  fs.writeFileSync(path.join(dir, 'hang.mjs'), 'export const GlobalWorkerOptions = {}\nexport function getDocument () { return { promise: new Promise(() => {}) } }\n')
  const crashing = createPdfReader({ pdfjs: pathToFileURL(path.join(dir, 'crash.mjs')).href, worker: '' })
  await t.rejects(crashing.extract(new Uint8Array([1]), 1, 1), { message: /ERROR BINARY_FILE: the PDF could not be read: boom/ })
  await t.rejects(crashing.extract(new Uint8Array([1]), 1, 1), { message: /ERROR BINARY_FILE/ }, 'a later call starts again')

  const hanging = createPdfReader({ pdfjs: pathToFileURL(path.join(dir, 'hang.mjs')).href, worker: '' })
  const controller = new AbortController()
  const stuck = hanging.extract(new Uint8Array([1]), 1, 1, controller.signal)
  setTimeout(() => controller.abort(), 50)
  await t.rejects(stuck, { message: /ERROR CANCELLED: the PDF text extraction was stopped/ })
  await t.rejects(hanging.extract(new Uint8Array([1]), 1, 1, controller.signal), { name: 'AbortError' }, 'an aborted signal is refused before any work')

  const real = await workspaceWith(t, { 'doc.pdf': makePdf(['after the others']) })
  t.match(textOf(await read(real, [{ path: 'doc.pdf' }])), /after the others/)
  const big = path.join(path.dirname(path.join(real.root, 'x')), 'big.pdf')
  fs.writeFileSync(big, '%PDF-1.4\n')
  fs.truncateSync(big, 65 * 1024 * 1024)
  t.match(textOf(await read(real, [{ path: 'big.pdf' }])), /ERROR FILE_TOO_LARGE: "big\.pdf" is a 65(\.0)? MB PDF/)
})

t.test('images: sent as image content with an honest token estimate, within the budget', async (t) => {
  const ws = await workspaceWith(t, {
    'a.png': makePng(800, 600),
    'wide.png': makePng(4000, 3000),
    'b.gif': gif(100, 50),
    'bad.png': Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]), Buffer.from('IHDR'), Buffer.from([0, 0])]),
    'notes.txt': 'hello\n',
    'a.zip': Buffer.from([0x50, 0x4b, 0x03, 0x04, 0x14, 0, 0, 0, 0, 0]),
    'blob.bin': Buffer.from([1, 0, 2, 0, 3]),
    'weird.ts': Buffer.from([1, 0, 2, 0, 3])
  })
  const both = await read(ws, [{ path: 'a.png' }, { path: 'b.gif' }, { path: 'notes.txt' }])
  t.match(textOf(both), /^### a\.png — image \([\d.]+ KB, image\/png, 800×600, ≈640 tokens\), attached after this text\n\n### b\.gif — image \([\d.]+ B, image\/gif, 100×50, ≈7 tokens\), attached/)
  t.same(both.content.slice(1).map(c => c.type === 'image' ? c.mimeType : c.type), ['image/png', 'image/gif'])
  const png = both.content[1] as { data: string }
  t.same(Buffer.from(png.data, 'base64'), fs.readFileSync(path.join(ws.root, 'a.png')), 'the bytes, base64')
  t.match(filesOf(both), [{ path: 'a.png', media_type: 'image/png', attached: true }, { path: 'b.gif', attached: true }, { path: 'notes.txt', total_lines: 1 }])

  const wide = await read(ws, [{ path: 'wide.png' }])
  t.match(textOf(wide), /4000×3000, ≈1534 tokens/, 'scaled to what a model sees before it is counted')

  // 1000 tokens with text in the call: images get three quarters, in order; the second does not fit.
  const tight = await read(ws, [{ path: 'a.png' }, { path: 'wide.png' }, { path: 'notes.txt' }], { max_response_tokens: 1000 })
  t.match(textOf(tight), /### wide\.png — image \(.*\), not attached: it does not fit what max_response_tokens=1000 leaves/)
  t.equal(tight.content.length, 2)
  t.match(filesOf(tight), [{ attached: true }, { attached: false }, {}])
  const alone = await read(ws, [{ path: 'wide.png' }], { max_response_tokens: 1000 })
  t.match(filesOf(alone), [{ attached: false }], 'over the whole budget, not attached either')

  const refused = await read(ws, [{ path: 'bad.png' }, { path: 'a.zip' }, { path: 'blob.bin' }, { path: 'weird.ts' }])
  t.equal(refused.isError, true)
  t.match(textOf(refused), /"bad\.png" starts like a image\/png image but its header does not parse/)
  t.match(textOf(refused), /"a\.zip" is binary \(10 bytes, application\/zip\)/)
  t.match(textOf(refused), /"blob\.bin" is binary \(5 bytes\); not shown as text/)
  t.match(textOf(refused), /"weird\.ts" is binary \(5 bytes, TypeScript by extension\)/)

  fs.writeFileSync(path.join(ws.root, 'huge.png'), makePng(10, 10))
  fs.truncateSync(path.join(ws.root, 'huge.png'), 6 * 1024 * 1024)
  t.match(textOf(await read(ws, [{ path: 'huge.png' }])), /ERROR FILE_TOO_LARGE: "huge\.png" is a 6(\.0)? MB image\/png image \(images are sent up to 5(\.0)? MB\)/)
})

t.test('legacy encodings: detected, named in the heading, overridable; search reads a named file in its charset', async (t) => {
  const sjis = iconv.encode('日本語のテキストです。\nこんにちは世界、これはシフトJISのファイルです。\n東京都渋谷区\n', 'shift_jis')
  const latin = iconv.encode('Café crème brûlée à la française, naïve façade.\nÜber straße\n', 'latin1')
  const gbk = iconv.encode('这是一个中文文本，用于测试编码检测。\n第二行\n', 'gbk')
  const longLine = iconv.encode('a' + '漢'.repeat(5000) + '\n', 'shift_jis')
  const ws = await workspaceWith(t, { 'sjis.txt': sjis, 'latin.txt': latin, 'gbk.txt': gbk, 'long.txt': longLine, 'even.txt': iconv.encode('漢'.repeat(5000) + '\n', 'shift_jis'), 'utf16.txt': Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('hi\n', 'utf16le')]) })

  const detected = await read(ws, [{ path: 'sjis.txt' }, { path: 'latin.txt' }, { path: 'gbk.txt' }, { path: 'long.txt' }, { path: 'even.txt' }])
  t.match(textOf(detected), /### sjis\.txt — lines 1–3 of 3 \(84 B, Shift_JIS \(detected; encoding= reads it as another\)\)\n1\t日本語のテキストです。/)
  t.match(textOf(detected), /### latin\.txt — .*ISO-8859-1 \(detected.*\n1\tCafé crème brûlée à la française, naïve façade\.\n2\tÜber straße/)
  t.match(textOf(detected), /### gbk\.txt — .*GB18030 \(detected.*\n1\t这是一个中文文本，用于测试编码检测。/)
  t.match(textOf(detected), /### long\.txt — .*\n1\ta漢{1999}… \[line cut: 2000 chars shown of a 9\.8 KB line\]/, 'a cut inside a two-byte character leaves no replacement character')
  t.match(textOf(detected), /### even\.txt — .*\n1\t漢{2000}… \[line cut/, 'a cut between characters keeps them all')
  t.match(filesOf(detected), [{ encoding: 'Shift_JIS' }, { encoding: 'ISO-8859-1' }, { encoding: 'GB18030' }, { encoding: 'Shift_JIS' }])

  const forced = await read(ws, [{ path: 'sjis.txt', encoding: 'windows-1252' }, { path: 'latin.txt', encoding: 'UTF-8' }], { max_lines_per_file: 1 })
  t.match(textOf(forced), /sjis\.txt — lines 1–1 of 3 \(84 B, windows-1252 \(as asked\)\)/)
  t.match(textOf(forced), /next: read_files files=\[\{"path":"sjis\.txt","start_line":2,"encoding":"windows-1252"\}\]/)
  t.match(textOf(forced), /latin\.txt — lines 1–1 of 2 \(60 B, invalid UTF-8 shown as \uFFFD\)/)
  const refused = await read(ws, [{ path: 'sjis.txt', encoding: 'klingon' }, { path: 'sjis.txt', encoding: 'utf-16le' }, { path: 'utf16.txt', encoding: 'latin1' }])
  t.same(filesOf(refused).map(f => f.error), ['INVALID_ARGUMENT', 'INVALID_ARGUMENT', 'INVALID_ARGUMENT'])
  t.match(textOf(refused), /files\[0\]\.encoding "klingon" is not an encoding read_files decodes/)
  t.match(textOf(refused), /files\[2\]\.encoding: the file starts with a UTF-16 byte-order mark/)

  // Whatever bytes a text file holds (no NUL), it reads without an error.
  await fc.assert(fc.asyncProperty(fc.uint8Array({ minLength: 1, maxLength: 300 }).map(a => Buffer.from(a.map(b => b === 0 ? 0x41 : b))), async (bytes) => {
    fs.writeFileSync(path.join(ws.root, 'any.txt'), bytes)
    const [file] = filesOf(await read(ws, [{ path: 'any.txt' }]))
    return file.error === undefined && typeof file.total_lines === 'number'
  }), { numRuns: 80 })

  const search = await createSearch({ workspace: ws, log, limiter: createLimiter() })
  const hit = await searchRegex.run({ workspace: ws, search, tokenizer, pattern: '東京', path: 'sjis.txt' } as never, toolContext())
  t.match(textOf(hit), /## sjis\.txt\n3: 東京都渋谷区/)
})

t.test('get_file_info names the type of a binary file and the charset of a legacy text', async (t) => {
  const ws = await workspaceWith(t, { 'a.png': makePng(4, 4), 'doc.pdf': makePdf(['x']), 'sjis.txt': iconv.encode('東京都渋谷区の住所です。\n', 'shift_jis'), 'plain.txt': 'plain\n' })
  const info = await getFileInfo.run({ workspace: ws, paths: ['a.png', 'doc.pdf', 'sjis.txt', 'plain.txt'] }, toolContext())
  t.match((info.structuredContent as { items: unknown[] }).items, [
    { path: 'a.png', media_type: 'image/png', binary: true },
    { path: 'doc.pdf', media_type: 'application/pdf', binary: false },
    { path: 'sjis.txt', encoding: 'Shift_JIS', binary: false, lines: 1 },
    { path: 'plain.txt', binary: false }
  ])
  t.match(textOf(info), /^a\.png — file, \d+ B, image\/png, binary, /)
  t.notOk('lines' in (info.structuredContent as { items: Array<Record<string, unknown>> }).items[1], 'the lines of a PDF file are not its text lines: not counted')
  t.match(textOf(info), /\ndoc\.pdf — file, \d+ B, application\/pdf, text, PDF, its text comes by pages; read_files returns it, /)
  const without = await getFileInfo.run({ workspace: ws, paths: ['doc.pdf'] }, toolContext(undefined, ['read_files']))
  t.match(textOf(without), /^doc\.pdf — file, \d+ B, application\/pdf, text, PDF, its text comes by pages(, |$)/, 'the note names read_files only where it is served')
  t.match(textOf(info), /\nsjis\.txt — file, \d+ B, 1 line, text in Shift_JIS, /)
})
