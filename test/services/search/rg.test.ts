// runRg, the ripgrep runner, driven by a stand-in process (a shell printing chosen records) so every
// framing case is exact: records longer than the cap, sinks that stop the run, a binary that
// cannot be spawned, a request cancelled before the child exists.
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { PassThrough } from 'node:stream'
import t from 'tap'
import { classifyRgError, cleanMessage, runRg, type LongRecordSink, type RunRgOptions } from '../../../src/services/search/rg.js'
import { readStderrFile } from '../../../src/services/search/rg-stderr.js'

const NL = 0x0a

/** Runs a shell `script` as "ripgrep", collecting the records it prints. */
async function fakeScript (script: string, options: Partial<RunRgOptions> = {}) {
  const records: string[] = []
  const run = await runRg({
    rgPath: '/bin/sh',
    args: ['-c', script],
    cwd: process.cwd(),
    deadline: Date.now() + 20000,
    separator: NL,
    onRecord: (record) => { records.push(record.toString()) },
    ...options
  })
  return { run, records }
}

const chunkDir = fs.mkdtempSync(path.join(os.tmpdir(), 'wmcp-rg-chunks-'))
t.teardown(() => fs.rmSync(chunkDir, { recursive: true, force: true }))
let chunkFiles = 0

/** A "ripgrep" that writes `chunks` to stdout, one write each (cat of a file), 10 ms apart. */
function fake (chunks: string[], options: Partial<RunRgOptions> = {}) {
  const files = chunks.map(chunk => {
    const file = path.join(chunkDir, String(chunkFiles++))
    fs.writeFileSync(file, chunk)
    return file
  })
  return fakeScript(files.map(file => `cat '${file}'`).join('; sleep 0.01; ') || 'true', options)
}

/** A sink that collects one long record and answers `verdict` at its end. */
function sink (verdict: boolean | undefined) {
  const got: string[] = []
  const ends: number[] = []
  const make = (): LongRecordSink => {
    let text = ''
    return { push: (piece) => { text += piece.toString() }, end: () => { got.push(text); ends.push(text.length); return verdict } }
  }
  return { make, got, ends }
}

t.test('a record over the cap inside one chunk goes to the sink whole; a sink answering false stops the run', async (t) => {
  const long = sink(false)
  const { run, records } = await fake([`short\n${'x'.repeat(40)}\nnever\n`], { maxRecordBytes: 10, onLongRecord: long.make })

  t.same(records, ['short'])
  t.same(long.got, ['x'.repeat(40)])
  t.equal(run.end, 'stopped')
  t.equal(run.code, null, 'a stopped run has no exit code of its own')
})

t.test('a record over the cap that started in an earlier chunk ends in the sink; false stops the run there too', async (t) => {
  const long = sink(false)
  const { run, records } = await fake(['a\nbbbbbbbbbbbb', 'bbbbbbbb\nc\n'], { maxRecordBytes: 10, onLongRecord: long.make })

  t.same(records, ['a'])
  t.same(long.got, ['b'.repeat(20)])
  t.equal(run.end, 'stopped')
})

t.test('without a sink an over-long record is dropped and the records after it still arrive', async (t) => {
  const { run, records } = await fake([`a\n${'y'.repeat(30)}\nb\n`, `${'z'.repeat(8)}`, `${'z'.repeat(8)}\nc\n`], { maxRecordBytes: 10 })

  t.same(records, ['a', 'b', 'c'])
  t.same({ end: run.end, code: run.code, truncated: run.truncated }, { end: 'exit', code: 0, truncated: false })
})

// A pipe read never carries more than 64 KiB, so a record of 300 KiB reaches runRg in several reads however the
// machine schedules the writer: the cases below do not depend on timing.
const SPAN = 300 * 1024

t.test('a record spanning several pipe reads arrives whole and once', async (t) => {
  const { run, records } = await fake([`a\n${'w'.repeat(SPAN)}\nb\n`])

  t.same(records.map(record => record.length), [1, SPAN, 1])
  t.equal(records[1], 'w'.repeat(SPAN))
  t.same({ end: run.end, truncated: run.truncated, bytes: run.bytes }, { end: 'exit', truncated: false, bytes: SPAN + 5 })
})

t.test('without a sink a record spanning several pipe reads is dropped whole; the next one still arrives', async (t) => {
  const { run, records } = await fake([`a\n${'v'.repeat(SPAN)}\nb\n`], { maxRecordBytes: 1024 })

  t.same(records, ['a', 'b'])
  t.same({ end: run.end, truncated: run.truncated }, { end: 'exit', truncated: false })
})

t.test('a record whose separator opens the next pipe read is emitted once, with nothing empty after it', async (t) => {
  // The writer holds the second chunk until runRg has handled the first (its record 'a' arrived), so the boundary
  // falls exactly before the separator on any machine.
  const first = path.join(chunkDir, String(chunkFiles++))
  const second = path.join(chunkDir, String(chunkFiles++))
  fs.writeFileSync(first, 'a\nbbb')
  fs.writeFileSync(second, '\nc\n')
  const input = new PassThrough()
  const records: string[] = []
  const run = await runRg({
    rgPath: '/bin/sh',
    args: ['-c', `cat '${first}'; read go; cat '${second}'`],
    cwd: process.cwd(),
    deadline: Date.now() + 20000,
    separator: NL,
    input,
    onRecord: (record) => {
      records.push(record.toString())
      if (records.length === 1) input.write('go\n')
    }
  })

  t.same(records, ['a', 'bbb', 'c'])
  t.same({ end: run.end, truncated: run.truncated, bytes: run.bytes }, { end: 'exit', truncated: false, bytes: 8 })
})

t.test('a ripgrep that cannot be started is an error run (code 2) naming why, not a crash', async (t) => {
  const { run, records } = await fake([], { rgPath: '/nonexistent/rg' })

  t.same(records, [])
  t.equal(run.code, 2)
  t.match(run.stderr, /^rg: spawn \[path outside the workspace\] ENOENT$/, 'the reason, without echoing the absolute path')
})

t.test('ripgrep\'s messages show no server path: the root as ".", any other as a placeholder, a root of / named by none', async (t) => {
  t.equal(cleanMessage('rg: /srv/ws/src/a.c: Permission denied (os error 13)\n', '/srv/ws'), 'rg: src/a.c: Permission denied (os error 13)')
  t.equal(cleanMessage("rg: /srv/ws: loop, see '/etc/passwd'", '/srv/ws'), "rg: .: loop, see '[path outside the workspace]'")
  t.equal(cleanMessage('rg: /etc/x: denied', '/'), 'rg: [path outside the workspace]: denied', 'a workspace over / keeps nothing as a name')
})

t.test('a request cancelled before the run starts spawns nothing and ends aborted', async (t) => {
  const live = new Set<number>()
  const controller = new AbortController()
  controller.abort(new Error('cancelled by client'))
  const { run, records } = await fake(['never\n'], { signal: controller.signal, live })

  t.same({ end: run.end, code: run.code, bytes: run.bytes }, { end: 'aborted', code: null, bytes: 0 })
  t.same(records, [])
  t.equal(live.size, 0)
})

t.test('a run stopped by its reader drops what the pipe still holds; the first reason to stop is the one reported', async (t) => {
  // One write far bigger than a pipe read: the reader stops at the first record, later reads are ignored.
  let calls = 0
  const { run: burst } = await fake([`first\n${'more\n'.repeat(100000)}`], { onRecord: () => { calls++; return false } })
  t.same({ end: burst.end, calls }, { end: 'stopped', calls: 1 })

  const controller = new AbortController()
  const seen: string[] = []
  const { run } = await fake(['a\nb\n'], {
    signal: controller.signal,
    // Cancelled while the reader is still deciding: the abort stops the run first, the reader's false finds it stopped.
    onRecord: (record) => { seen.push(record.toString()); controller.abort(new Error('cancelled')); return false }
  })
  t.same({ end: run.end, seen }, { end: 'aborted', seen: ['a'] })
})

t.test('stderr names the caller\'s path instead of the pinned /proc descriptor path, a last line without its newline too', async (t) => {
  const script = "printf 'rg: /proc/self/fd/9/secret.txt: Permission denied (os error 13)' >&2; exit 2"
  const { run } = await fakeScript(script, { names: [['/proc/self/fd/9', 'src/private']] })

  t.equal(run.code, 2)
  t.match(run.stderr, /^rg: src\/private\/secret\.txt: Permission denied \(os error 13\)/)
  t.notMatch(run.stderr, /\/proc\//)
})

t.test('a parse error shows the caller\'s pattern, not ripgrep\'s "(?:…)"; a message of another shape is left as it is', async (t) => {
  const message = (stderr: string, pattern: string): string => classifyRgError(stderr, pattern)?.message ?? ''
  t.match(message('rg: regex parse error:\n    (?:a{2)\n        ^^\nerror: unclosed counted repetition\n', 'a{2'), /\n {4}a\{2\n {5}\^\^\n/)
  t.match(message('rg: regex parse error:\n    (?:ab)\nerror: no marker line\n', 'ab'), /\n {4}ab\nerror: no marker line/, 'no markers to move')
  t.match(message('rg: regex parse error:\n    (?:ab)\n', 'ab'), /\n {4}ab\./, 'the pattern as the last line')
  t.match(message('rg: regex parse error:\n    (?:a)|(?:b)\n    ^\n', 'a'), /\(\?:a\)\|\(\?:b\)/, 'several patterns: ripgrep\'s own text')
})

t.test('stderr goes to a file of the run\'s own (no name left behind), or to a pipe when the temporary folder takes none: the same answer', async (t) => {
  // A debug line in pieces (as ripgrep writes them), a skipped binary file, a message, and 3,000 more debug lines.
  const script = "readlink /proc/$$/fd/2; printf 'rg: DEBUG|grep_printer::summary|x.rs:1: ./a.bin: found binary data at offset 4\\n'; " +
    "printf 'rg: ' >&2; printf 'DEBUG|grep_printer::summary|x.rs:1: ./b.bin: found binary data at offset 9\\n' >&2; " +
    "i=0; while [ $i -lt 3000 ]; do echo 'rg: DEBUG|ignore::walk|walk.rs:1: ./x: ignored' >&2; i=$((i+1)); done; " +
    "echo 'rg: ./c: Permission denied (os error 13)' >&2; exit 2"
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'wmcp-rg-stderr-'))
  t.teardown(() => fs.rmSync(tmp, { recursive: true, force: true }))
  const before = process.env.TMPDIR
  t.teardown(() => { if (before === undefined) delete process.env.TMPDIR; else process.env.TMPDIR = before })

  process.env.TMPDIR = tmp
  const file = await fakeScript(script)
  t.match(file.records[0], new RegExp(`^${tmp}/workspace-mcp-rg-[\\w-]+\\.err \\(deleted\\)$`), 'ripgrep wrote to a file, unlinked as soon as it was opened')
  t.same(fs.readdirSync(tmp), [])
  process.env.TMPDIR = path.join(tmp, 'missing')
  const pipe = await fakeScript(script)
  t.match(pipe.records[0], /^(pipe|socket):/, 'a pipe (libuv makes a socket pair) when the temporary folder takes no file')
  const [viaFile, viaPipe] = [file.run, pipe.run]

  for (const run of [viaFile, viaPipe]) {
    t.equal(run.code, 2)
    t.same(run.skipped, { binary: 1, tooLarge: 0 }, 'the skip on stderr counts; the same text on stdout is a record')
    t.equal(run.stderr, 'rg: ./c: Permission denied (os error 13)', 'debug lines are left out of the message')
  }
})

t.test('a stderr file that cannot be read ends the reading: what was read stands, the descriptor is closed', async (t) => {
  const dir = fs.openSync(t.testdir({}), 'r')
  const texts: string[] = []
  await readStderrFile(dir, text => { texts.push(text) })
  t.same(texts, [], 'a folder reads as nothing (EISDIR)')
  t.throws(() => fs.fstatSync(dir), { code: 'EBADF' }, 'closed')
})
