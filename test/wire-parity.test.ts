import t from 'tap'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { request } from 'undici'
import { httpInProcess, stdioInProcess } from './helpers/in-process.js'
import { waitUntil } from './helpers/wait.js'

// The same bytes, sent to the engine over stdio and over HTTP (both in this process), get the same JSON-RPC answer,
// byte for byte (HTTP status codes aside): one parser, one classifier, one error writer.

const root = mkdtempSync(join(tmpdir(), 'wmcp-wire-'))
writeFileSync(join(root, 'a.txt'), 'alpha\n')

const BODY_LIMIT = 1024
const STDIO_LINE_CAP = 10 * 1024 * 1024

/** Raw bodies: hostile and malformed envelopes, and a few valid controls. */
const BODIES: Array<[string, string | Buffer]> = [
  ['invalid JSON', '{"jsonrpc":'],
  ['trailing garbage', '{"jsonrpc":"2.0","id":1,"method":"ping"} x'],
  ['__proto__ at the top level', '{"jsonrpc":"2.0","id":1,"method":"ping","__proto__":{"polluted":true}}'],
  ['__proto__ in params', '{"jsonrpc":"2.0","id":1,"method":"ping","params":{"__proto__":{"polluted":true}}}'],
  ['__proto__ in nested arguments', '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_files","arguments":{"files":[{"path":"a.txt","__proto__":{"x":1}}]}}}'],
  ['__proto__ spelled with escapes', '{"jsonrpc":"2.0","id":1,"method":"ping","params":{"\\u005f\\u005Fproto__":{}}}'],
  ['constructor.prototype at the top level', '{"jsonrpc":"2.0","id":1,"method":"ping","constructor":{"prototype":{"polluted":true}}}'],
  ['constructor.prototype in arguments', '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_files","arguments":{"constructor":{"prototype":{}}}}}'],
  ['batch', '[{"jsonrpc":"2.0","id":1,"method":"ping"}]'],
  ['empty batch', '[]'],
  ['string', '"ping"'],
  ['number', '42'],
  ['null', 'null'],
  ['missing jsonrpc', '{"id":1,"method":"ping"}'],
  ['wrong jsonrpc', '{"jsonrpc":2,"id":1,"method":"ping"}'],
  ['fractional id', '{"jsonrpc":"2.0","id":1.5,"method":"ping"}'],
  ['null id', '{"jsonrpc":"2.0","id":null,"method":"ping"}'],
  ['object id', '{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}'],
  ['boolean id', '{"jsonrpc":"2.0","id":true,"method":"ping"}'],
  ['method not a string', '{"jsonrpc":"2.0","id":1,"method":["ping"]}'],
  ['params an array', '{"jsonrpc":"2.0","id":7,"method":"ping","params":[1,2]}'],
  ['params a string', '{"jsonrpc":"2.0","id":"s","method":"ping","params":"x"}'],
  ['params null', '{"jsonrpc":"2.0","id":8,"method":"ping","params":null}'],
  ['notification with params not an object', '{"jsonrpc":"2.0","method":"notifications/cancelled","params":5}'],
  ['response with result and error', '{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"m"}}'],
  ['response with neither', '{"jsonrpc":"2.0","id":1}'],
  ['response with a string error', '{"jsonrpc":"2.0","id":1,"error":"boom"}'],
  ['response with a null id', '{"jsonrpc":"2.0","id":null,"result":{}}'],
  ['invalid UTF-8 in a string id', Buffer.concat([Buffer.from('{"jsonrpc":"2.0","id":"'), Buffer.from([0xff, 0xfe]), Buffer.from('","method":"ping"}')])],
  ['a BOM before a valid ping', '\ufeff{"jsonrpc":"2.0","id":"bom","method":"ping"}'],
  ['valid ping', '{"jsonrpc":"2.0","id":"p","method":"ping"}'],
  ['unknown method', '{"jsonrpc":"2.0","id":5,"method":"no/such"}'],
  ['unknown tool', '{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"nope","arguments":{}}}'],
  ['nested unknown argument', '{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"read_files","arguments":{"files":[{"path":"a.txt","extra":1}]}}}']
]

t.test('malformed and hostile bodies get byte-identical JSON-RPC answers over stdio and HTTP', { timeout: 60000 }, async (t) => {
  const http = await httpInProcess(t, ['--root', root, '--mode', 'stateless', '--body-limit', String(BODY_LIMIT)])
  const proc = await stdioInProcess(t, ['--root', root])
  proc.send({ jsonrpc: '2.0', id: 'init', method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'parity', version: '1' } } })
  await proc.response('init')
  proc.send({ jsonrpc: '2.0', method: 'notifications/initialized' })

  /** Writes one line to stdio and returns the next line the server prints. */
  async function overStdio (body: string | Buffer): Promise<string> {
    const seen = proc.stdout.length
    proc.write(body)
    proc.write('\n')
    await waitUntil(() => proc.stdout.length > seen, 'the answer to a line over stdio')
    t.equal(proc.stdout.length, seen + 1, 'one answer per line')
    return proc.stdout[seen] ?? ''
  }
  async function overHttp (body: string | Buffer): Promise<{ status: number, text: string }> {
    const res = await request(http.url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body })
    return { status: res.statusCode, text: await res.body.text() }
  }

  for (const [name, body] of BODIES) {
    const viaHttp = await overHttp(body)
    const viaStdio = await overStdio(body)
    t.equal(viaHttp.text, viaStdio, `${name}: same bytes (HTTP ${viaHttp.status})`)
    t.ok(viaHttp.text.startsWith('{"jsonrpc":"2.0","id":'), `${name}: a JSON-RPC answer`)
  }

  // Over each transport's own cap: HTTP's bodyLimit, stdio's line cap.
  const pad = (n: number): string => `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"${'x'.repeat(n)}"}}`
  const tooBigHttp = await overHttp(pad(BODY_LIMIT * 2))
  const tooBigStdio = await overStdio(pad(STDIO_LINE_CAP + 1024))
  t.equal(tooBigHttp.status, 413)
  t.equal(tooBigHttp.text, tooBigStdio, 'an over-long message: same bytes')
  t.equal(tooBigStdio, '{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: the message exceeds the size limit"}}')

  const after = await overStdio('{"jsonrpc":"2.0","id":"last","method":"ping"}')
  t.equal(after, '{"jsonrpc":"2.0","id":"last","result":{}}', 'stdio goes on after all of it')
  t.equal(({} as Record<string, unknown>).polluted, undefined)
})
