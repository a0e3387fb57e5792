import t from 'tap'
import { PassThrough, Writable } from 'node:stream'
import { serveStdio } from '../../src/mcp/stdio.js'
import { parkedTool, testEngine } from '../helpers/engine.js'
import { waitUntil } from '../helpers/wait.js'

/** serveStdio over in-memory streams; `lines` collects what the server writes. */
function harness (maxLineBytes?: number) {
  const { server, log, lines: logged } = testEngine()
  const input = new PassThrough()
  const lines: string[] = []
  const output = new PassThrough()
  output.on('data', (chunk: Buffer) => { for (const l of chunk.toString().split('\n')) if (l) lines.push(l) })
  const stdio = serveStdio({ server, input, output, log, maxLineBytes })
  const settle = async (count: number): Promise<void> => { await waitUntil(() => lines.length >= count, `${count} lines`) }
  return { input, output, lines, stdio, settle, logged }
}

t.test('an over-long line split over many chunks is one -32600 and one warning with its size; a request in the same chunk as its end is answered', async (t) => {
  const { input, lines, stdio, settle, logged } = harness(64)

  input.write('{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"')
  for (let i = 0; i < 10; i++) input.write('x'.repeat(50))
  input.write('"}}\r\n{"jsonrpc":"2.0","id":2,"method":"ping"}\r\n')
  await settle(2)
  stdio.close()

  t.strictSame(lines, [
    '{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: the message exceeds the size limit"}}',
    '{"jsonrpc":"2.0","id":2,"result":{}}'
  ])
  t.match(logged.filter(l => l.level === 40), [{ bytes: 561, maxLineBytes: 64, msg: 'dropped a 561-byte line over the 64-byte limit' }])
})

t.test('string chunks, blank lines and a character split across chunks', async (t) => {
  const { input, lines, stdio, settle } = harness()
  // An input with an encoding set (as a caller's stdin may have) hands over strings, not Buffers.
  input.setEncoding('utf8')
  const bytes = Buffer.from('{"jsonrpc":"2.0","id":"é✓","method":"ping"}\n')

  input.write('\n  \n')
  input.write(bytes.subarray(0, 25))
  input.write(bytes.subarray(25))
  input.write('not json\n')
  await settle(2)
  stdio.close()

  // A parse error is answered at once, a request when it finishes: compare regardless of order.
  t.strictSame(lines.sort(), [
    '{"jsonrpc":"2.0","id":"é✓","result":{}}',
    '{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error: the message is not valid JSON"}}'
  ].sort())
})

t.test('EOF resolves done; drain waits for a running call up to its limit, then closes the session, which stops it', async (t) => {
  const seen: string[] = []
  const { server, log } = testEngine({ tools: [parkedTool(seen)] })
  const input = new PassThrough()
  const output = new PassThrough()
  const lines: string[] = []
  output.on('data', (chunk: Buffer) => { for (const l of chunk.toString().split('\n')) if (l) lines.push(l) })
  const stdio = serveStdio({ server, input, output, log })
  input.write('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}\n')
  input.write('{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
  input.write('{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"parked","arguments":{},"_meta":{"progressToken":"p"}}}\n')
  // The call is running once its progress arrives.
  await waitUntil(() => lines.some(l => l.includes('notifications/progress')), 'the call\'s progress')

  input.end()
  t.equal(await stdio.done, 'eof')
  await stdio.drain(10)
  t.same(seen, ['aborted'], 'the call outlived the drain: closing the session stopped it')
  // Its answer, had one been due, is written a turn after the call ends.
  await waitUntil(() => server.activeCalls().length === 0, 'the stopped call to end')
  await new Promise(resolve => setImmediate(resolve))
  t.ok(lines.some(l => l.includes('notifications/progress')), 'it was running')
  t.notOk(lines.some(l => l.includes('"id":2')), 'a closed session answers nothing more (the client hung up first)')
})

t.test('an output error (EPIPE) ends the session and nothing more is written', async (t) => {
  const { server, log } = testEngine()
  const input = new PassThrough()
  let written = 0
  const output = new Writable({ write (_chunk, _enc, cb) { written++; cb(Object.assign(new Error('EPIPE'), { code: 'EPIPE' })) } })
  const stdio = serveStdio({ server, input, output, log })

  input.write('{"jsonrpc":"2.0","id":1,"method":"ping"}\n')
  t.equal(await stdio.done, 'output-closed')
  input.write('{"jsonrpc":"2.0","id":2,"method":"ping"}\n')
  // A ping is read and answered within a turn (no timer, no I/O in between): a write would have come by then.
  await new Promise(resolve => setImmediate(resolve))

  t.equal(written, 1)
})

t.test('answers ready in the same tick leave in one write; a later answer is written on its own, without waiting', async (t) => {
  const { server, log } = testEngine()
  const input = new PassThrough()
  const writes: string[][] = []
  const output = new Writable({
    write (chunk: Buffer, _encoding, callback) { writes.push([chunk.toString()]); callback() },
    writev (chunks, callback) { writes.push(chunks.map(c => String(c.chunk))); callback() }
  })
  const stdio = serveStdio({ server, input, output, log })
  const settle = async (count: number): Promise<void> => { await waitUntil(() => writes.flat().length >= count, `${count} answers`) }

  const pings = Array.from({ length: 10 }, (_, i) => `{"jsonrpc":"2.0","id":${i},"method":"ping"}\n`)
  input.write(pings.join('') + 'not json\n')
  await settle(11)
  t.equal(writes.length, 1, 'one write for the ten answers and the parse error of one chunk')
  t.strictSame(writes[0].map(line => (JSON.parse(line) as { id: unknown }).id), [null, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9], 'each answer a line of its own')
  t.ok(writes[0].every(line => line.endsWith('}\n')))

  input.write('{"jsonrpc":"2.0","id":"late","method":"ping"}\n')
  await settle(12)
  t.strictSame(writes.slice(1), [['{"jsonrpc":"2.0","id":"late","result":{}}\n']], 'a lone answer is one write of its own')
  stdio.close()
})

t.test('drain writes the answers it waited for at once, not a tick later (the bin exits right after it)', async (t) => {
  const { server, log } = testEngine()
  const input = new PassThrough()
  const writes: string[] = []
  const output = new Writable({
    write (chunk: Buffer, _encoding, callback) { writes.push(chunk.toString()); callback() },
    writev (chunks, callback) { writes.push(chunks.map(c => String(c.chunk)).join('')); callback() }
  })
  const stdio = serveStdio({ server, input, output, log })
  // Listening after serveStdio: by the time this runs, the request is in flight.
  const drained = new Promise<void>(resolve => input.once('data', () => { resolve(stdio.drain(1000)) }))
  input.write('{"jsonrpc":"2.0","id":1,"method":"ping"}\n')
  await drained
  t.strictSame(writes, ['{"jsonrpc":"2.0","id":1,"result":{}}\n'], 'written before drain resolved')
})
