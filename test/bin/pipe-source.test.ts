import t from 'tap'
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { PassThrough } from 'node:stream'
import { inputOf, pipeSource } from '../../src/bin/pipe-source.js'
import { serveStdio } from '../../src/mcp/stdio.js'
import { testEngine } from '../helpers/engine.js'

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wmcp-pipe-'))
t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }))

/** A FIFO with its read end open (non-blocking, so opening waits for no writer) and a writer. */
function fifo (name: string): { read: number, write: number } {
  const file = path.join(dir, name)
  execFileSync('mkfifo', [file])
  const read = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK)
  return { read, write: fs.openSync(file, 'w') }
}

t.test('only a pipe or a socket is read this way; a file, a terminal or a closed descriptor is left to process.stdin', async (t) => {
  const file = path.join(dir, 'plain.txt')
  fs.writeFileSync(file, 'x')
  const fd = fs.openSync(file, 'r')
  t.teardown(() => fs.closeSync(fd))

  const fallback = new PassThrough()

  t.equal(pipeSource(fd), undefined, 'a regular file')
  t.equal(pipeSource(987654), undefined, 'a descriptor that is not open')
  t.equal(inputOf(fd, () => fallback), fallback, 'the server then reads the Readable it is given')
  t.not(inputOf(fifo('probe').read, () => fallback), fallback, 'a pipe is read directly')
})

t.test('a stdio server over a real pipe read into one reused buffer: lines spanning reads arrive whole, an over-long one is refused', async (t) => {
  const { server, log } = testEngine()
  const { read, write } = fifo('stdin')
  const source = pipeSource(read, 4096)
  const output = new PassThrough()
  const lines: string[] = []
  output.on('data', (chunk: Buffer) => { for (const l of chunk.toString().split('\n')) if (l) lines.push(l) })
  const stdio = serveStdio({ server, input: source!, output, log, maxLineBytes: 20_000 })

  // Written as one block: the 4 KiB reads cut both lines, and every read overwrites the last.
  const pad = 'x'.repeat(15_000)
  fs.writeSync(write, '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}\n' +
    `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo_text","arguments":{"text":"${pad}"}}}\n` +
    `{"jsonrpc":"2.0","id":2,"method":"ping","params":{"pad":"${'y'.repeat(30_000)}"}}\n{"jsonrpc":"2.0","id":3,"method":"ping"}\n`)
  fs.closeSync(write)
  const reason = await stdio.done
  await stdio.drain(1000)

  t.equal(reason, 'eof', 'the writer closing is EOF')
  const answers = lines.map(l => JSON.parse(l))
  t.match(answers.find(a => a.id === 1), { result: { content: [{ text: pad }] } })
  t.match(answers.find(a => a.id === null), { error: { code: -32600 } })
  t.match(answers.find(a => a.id === 3), { result: {} })
  t.equal(answers.length, 4)
})
