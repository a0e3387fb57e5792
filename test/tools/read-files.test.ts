import t from 'tap'
import { writeFileSync } from 'node:fs'
import path from 'node:path'
import { createTokenizer } from '../../src/services/tokenizer/tokenizer.js'
import { readFiles } from '../../src/tools/read-files.js'
import { BIG_LINES, bigLine, hostileServices, textOf, toolContext } from '../helpers/workspace-fixture.js'

type Files = { files: Array<Record<string, unknown>> }
const filesOf = (sc: unknown) => (sc as Files).files

t.test('reads whole files with numbered lines, several per call', async (t) => {
  const fx = await hostileServices(t, { big: false })

  const result = await readFiles.run({ workspace: fx.workspace, tokenizer: fx.tokenizer, files: [{ path: 'src/app.ts' }, { path: 'crlf.txt' }, { path: 'no-newline.txt' }, { path: 'empty.txt' }] }, toolContext())
  const text = textOf(result)

  t.notOk(result.isError)
  t.match(text, /^### src\/app\.ts — lines 1–3 of 3 \(\d+ B\)\n1\texport function app \(\) \{\n2\t {2}return 42\n3\t\}/)
  t.match(text, /### crlf\.txt — lines 1–3 of 3 .*\n1\talpha\n2\tbeta\n3\tgamma/)
  t.match(text, /### no-newline\.txt — lines 1–3 of 3 .*\n1\tone\n2\ttwo\n3\tthree/)
  t.match(text, /### empty\.txt — empty file/)
  t.notMatch(text, /\r/)
  t.match(filesOf(result.structuredContent)[0], { path: 'src/app.ts', start_line: 1, end_line: 3, total_lines: 3 })
  t.notOk('next_start_line' in filesOf(result.structuredContent)[0])
})

t.test('ranges: start/end, negative start from the end, past the end', async (t) => {
  const fx = await hostileServices(t, { big: false })
  const read = async (file: Record<string, unknown>, extra = {}) => readFiles.run({ workspace: fx.workspace, tokenizer: fx.tokenizer, files: [file as never], ...extra }, toolContext())

  t.match(textOf(await read({ path: 'docs/guide.md', start_line: 2, end_line: 3 })), /lines 2–3 of 4 [^\n]*\n2\t\n3\tline three$/)
  const tail = await read({ path: 'docs/guide.md', start_line: -2 })
  t.match(textOf(tail), /lines 3–4 of 4 .*\n3\tline three\n4\tline four$/)
  t.match(textOf(await read({ path: 'docs/guide.md', start_line: 99 })), /no lines from 99 \(the file has 4 lines/)
  const capped = await read({ path: 'docs/guide.md' }, { max_lines_per_file: 2 })
  t.match(textOf(capped), /lines 1–2 of 4[^]*… 2 more lines — next: read_files files=\[\{"path":"docs\/guide\.md","start_line":3\}\]$/)
  t.match(filesOf(capped.structuredContent)[0], { next_start_line: 3 })
})

t.test('long lines are cut with a marker; links inside the root are read, outside ones refused', async (t) => {
  const fx = await hostileServices(t, { big: false })

  const result = await readFiles.run({ workspace: fx.workspace, tokenizer: fx.tokenizer, files: [{ path: 'long-line.txt' }, { path: 'link-inside' }, { path: 'link-to-secret' }, { path: 'link-to-outside-dir/secret.txt' }, { path: '../outside/secret.txt' }, { path: fx.outside + '/secret.txt' }, { path: '../root-evil/secret.txt' }] }, toolContext())
  const text = textOf(result)

  t.notOk(result.isError, 'some items succeeded')
  t.match(text, /\n2\ty{2000}… \[line cut: \+3000 chars\]\n/)
  t.match(text, /### link-inside — lines 1–3 of 3/)
  t.match(text, /### link-to-secret\nERROR SYMLINK_ESCAPES_ROOT/)
  t.match(text, /### link-to-outside-dir\/secret\.txt\nERROR SYMLINK_ESCAPES_ROOT/)
  t.match(text, /### \.\.\/outside\/secret\.txt\nERROR PATH_OUTSIDE_ROOT/)
  t.match(text, /### \.\.\/root-evil\/secret\.txt\nERROR PATH_OUTSIDE_ROOT/)
  t.notMatch(text, fx.canary)
  t.same(filesOf(result.structuredContent).map(f => f.error ?? 'ok'),
    ['ok', 'ok', 'SYMLINK_ESCAPES_ROOT', 'SYMLINK_ESCAPES_ROOT', 'PATH_OUTSIDE_ROOT', 'PATH_OUTSIDE_ROOT', 'PATH_OUTSIDE_ROOT'])
})

t.test('every item failing is isError; each failure has its own code', async (t) => {
  const fx = await hostileServices(t, { big: false })
  const files = [{ path: 'binary.bin' }, { path: 'src' }, { path: 'nope.txt' }, { path: 'loop-a' }, { path: 'a\u0000b' }]
  if (fx.hasFifo) files.push({ path: 'fifo' })

  const result = await readFiles.run({ workspace: fx.workspace, tokenizer: fx.tokenizer, files }, toolContext())

  t.equal(result.isError, true)
  const codes = filesOf(result.structuredContent).map(f => f.error)
  t.same(codes, ['BINARY_FILE', 'IS_A_DIRECTORY', 'PATH_NOT_FOUND', 'INVALID_PATH', 'INVALID_PATH', ...(fx.hasFifo ? ['NOT_A_REGULAR_FILE'] : [])])
})

t.test('more than 20 files is TOO_MANY_ITEMS', async (t) => {
  const fx = await hostileServices(t, { big: false })
  const files = Array.from({ length: 21 }, () => ({ path: 'README.md' }))

  await t.rejects(Promise.resolve().then(() => readFiles.run({ workspace: fx.workspace, tokenizer: fx.tokenizer, files }, toolContext())), { message: /^ERROR TOO_MANY_ITEMS/ })
})

t.test('a 20 MB file: unranged is FILE_TOO_LARGE, ranged windows stream from anywhere', async (t) => {
  const fx = await hostileServices(t)
  const read = async (file: Record<string, unknown>) => readFiles.run({ workspace: fx.workspace, tokenizer: fx.tokenizer, files: [file as never] }, toolContext())

  const whole = await read({ path: 'big.txt' })
  t.equal(whole.isError, true)
  t.match(textOf(whole), /ERROR FILE_TOO_LARGE: "big\.txt" is 19\.1 MB/)

  const middle = await read({ path: 'big.txt', start_line: 150_000, end_line: 150_002 })
  t.match(textOf(middle), new RegExp(`lines 150000–150002 of ${BIG_LINES} [^\\n]*\\n150000\\t${bigLine(150_000)}\\n150001\\t${bigLine(150_001)}\\n150002\\t${bigLine(150_002)}$`))

  const tail = await read({ path: 'big.txt', start_line: -1 })
  t.match(textOf(tail), new RegExp(`lines ${BIG_LINES}–${BIG_LINES} of ${BIG_LINES}[^\\n]*\\n${BIG_LINES}\\t${bigLine(BIG_LINES)}$`))
})

t.test('the token budget is shared, cut windows say how to continue', async (t) => {
  const fx = await hostileServices(t)
  const counted: number[] = []
  const quarter = (text: string) => Math.ceil(text.length / 4)
  // Exact counts are chars/4 here (rounded up per part, so sums never undercount), so the test does not depend on the BPE worker.
  const tokenizer = {
    ...fx.tokenizer,
    count: (text: string) => Buffer.byteLength(text),
    countExact: async (text: string) => { counted.push(text.length); return quarter(text) },
    countParts: async (parts: readonly string[]) => {
      counted.push(...parts.map(p => p.length))
      return { tokens: parts.map(quarter), exact: parts.map(() => true) }
    }
  }

  await readFiles.run({ workspace: fx.workspace, tokenizer, files: [{ path: 'src/app.ts' }] }, toolContext())
  t.equal(counted.length, 0, 'a small response never reaches the tokenizer')

  const result = await readFiles.run({ workspace: fx.workspace, tokenizer, max_response_tokens: 1000, files: [{ path: 'src/app.ts' }, { path: 'big.txt', start_line: 1, end_line: 2000 }] }, toolContext())
  const text = textOf(result)

  t.ok(quarter(text) <= 1000, `response within budget (${quarter(text)})`)
  t.match(text, /### src\/app\.ts — lines 1–3 of 3/)
  const big = filesOf(result.structuredContent)[1]
  t.match(big, { start_line: 1 })
  t.ok((big.next_start_line as number) > 1)
  t.match(text, new RegExp(`cut to fit max_response_tokens=1000\\) — next: read_files files=\\[\\{"path":"big\\.txt","start_line":${String(big.next_start_line)},"end_line":2000\\}\\]`))
})

t.test('a 1 MB read sends about one budget of text to the BPE, not the file, and still fits exactly', async (t) => {
  const fx = await hostileServices(t, { big: false })
  const tokenizer = createTokenizer({ workers: 1 })
  t.teardown(() => tokenizer.close())
  const line = 'const value = compute(alpha, beta) + 42; '.repeat(12) + '\n' // ~500 bytes
  writeFileSync(path.join(fx.root, 'mega.txt'), line.repeat(2100))
  const result = await readFiles.run({ workspace: fx.workspace, tokenizer, files: [{ path: 'mega.txt' }], max_response_tokens: 5000 }, toolContext())
  const text = textOf(result)
  const sent = tokenizer.stats().chars
  // Before: the whole 1 MB response was counted, then the item, then up to 8 cuts of it (several MB).
  t.ok(sent < 60_000, `chars sent to the BPE: ${sent}`)
  const tokens = await tokenizer.countExact(text)
  t.ok(tokens <= 5000 && tokens > 4500, `the answer uses the budget well: ${tokens} tokens of 5000`)
  t.match(text, /cut to fit max_response_tokens=5000\) — next: read_files/)
})

t.test('encodings and kinds: UTF-16 either way round, a short Latin-1 file, binary files named by their extension', async (t) => {
  const fx = await hostileServices(t, { big: false })
  const le = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('héllo\nwörld\n', 'utf16le')])
  const be = Buffer.from(le.subarray(2)).swap16()
  writeFileSync(path.join(fx.root, 'le.txt'), le)
  writeFileSync(path.join(fx.root, 'be.txt'), Buffer.concat([Buffer.from([0xfe, 0xff]), be]))
  writeFileSync(path.join(fx.root, 'latin1.txt'), Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]))
  writeFileSync(path.join(fx.root, 'logo.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x00, 0x01]))

  const result = await readFiles.run({ workspace: fx.workspace, tokenizer: fx.tokenizer, files: [{ path: 'le.txt' }, { path: 'be.txt' }, { path: 'latin1.txt' }, { path: 'logo.png' }] }, toolContext())
  const text = textOf(result)

  t.match(text, /### le\.txt — lines 1–2 of 2 \(\d+ B, UTF-16LE\)\n1\théllo\n2\twörld/)
  t.match(text, /### be\.txt — lines 1–2 of 2 \(\d+ B, UTF-16BE\)\n1\théllo\n2\twörld/)
  t.match(text, /### latin1\.txt — lines 1–1 of 1 \(5 B, windows-1252 \(detected; encoding= reads it as another\)\)\n1\tcafé/, 'too few bytes for the detector: read as windows-1252')
  t.match(text, /### logo\.png\nERROR BINARY_FILE: "logo\.png" is binary \(7 bytes, PNG image by extension\); not shown as text/)
})

t.test('a line kept only in part is cut on a character boundary: never half of a surrogate pair', async (t) => {
  const fx = await hostileServices(t, { big: false })
  // One ASCII character, then emoji: every odd UTF-16 index is a high surrogate, including 1,999.
  writeFileSync(path.join(fx.root, 'emoji.txt'), 'a' + '😀'.repeat(20_000) + '\n')

  const text = textOf(await readFiles.run({ workspace: fx.workspace, tokenizer: fx.tokenizer, files: [{ path: 'emoji.txt' }], max_response_tokens: 20000 }, toolContext()))
  const line = text.split('\n')[1].slice(2)

  t.match(line, /… \[line cut: 1999 chars shown of a 78\.1 KB line\]$/)
  const head = line.slice(0, line.indexOf('…'))
  t.equal(head.length, 1999)
  t.notMatch(head, /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/, 'no lone surrogate reaches the client')

  writeFileSync(path.join(fx.root, 'wide.txt'), 'x'.repeat(10_000) + '\n')
  const wide = textOf(await readFiles.run({ workspace: fx.workspace, tokenizer: fx.tokenizer, files: [{ path: 'wide.txt' }] }, toolContext()))
  t.match(wide, /\n1\tx{2000}… \[line cut: 2000 chars shown of a 9\.8 KB line\]$/)
})

t.test('a tight budget over several files: one may get no lines (and says so), a window past the end stays small, estimates are flagged', async (t) => {
  const fx = await hostileServices(t, { big: false })
  const prose = (n: number) => Array.from({ length: n }, (_, i) => `line ${i}: the quick brown fox jumps over the lazy dog`).join('\n') + '\n'
  writeFileSync(path.join(fx.root, 'one.txt'), prose(400))
  writeFileSync(path.join(fx.root, 'two.txt'), prose(400))
  // A call may send only this many characters to the BPE; past it, sizes are byte bounds.
  const capped = createTokenizer({ maxCallChars: 2000 })
  t.teardown(() => { capped.close().catch(() => {}) })

  const result = await readFiles.run({
    workspace: fx.workspace,
    tokenizer: capped,
    files: [{ path: 'one.txt' }, { path: 'two.txt' }, { path: 'src/app.ts', start_line: 50 }],
    max_response_tokens: 1000
  }, toolContext())
  const text = textOf(result)

  t.ok(await fx.tokenizer.countExact(text) <= 1000, 'fits')
  t.match(text, /### src\/app\.ts — no lines from 50 \(the file has 3 lines; /)
  t.match(text, /cut to fit max_response_tokens=1000; sizes estimated from bytes\) — next: read_files/, 'estimates are said')
  const starved = await readFiles.run({
    workspace: fx.workspace,
    tokenizer: capped,
    files: Array.from({ length: 20 }, (_, i) => ({ path: i % 2 === 0 ? 'one.txt' : 'two.txt', start_line: 1 + i })),
    max_response_tokens: 1000
  }, toolContext())
  t.match(textOf(starved), /— no lines shown: the token budget ran out \(400 lines; /, 'a file whose share cannot hold one line says so')
})
