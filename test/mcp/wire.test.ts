import t from 'tap'
import fc from 'fast-check'
import { runs } from '../helpers/property.js'
import { classify, findPoisonedKey, invalidMessage, parseMessage, tooLargeError } from '../../src/mcp/wire/wire.js'

/** The JSON-RPC answer a transport writes for a message that never reaches the engine. */
function answerFor (text: string): Record<string, unknown> | undefined {
  const parsed = parseMessage(text)
  if (!parsed.ok) return JSON.parse(invalidMessage(null, parsed.error))
  const c = classify(parsed.message)
  return c.kind === 'invalid' ? JSON.parse(invalidMessage(c.id, c.error)) : undefined
}

t.test('prototype-poisoning keys are refused with -32700 naming the key, at any depth and in any spelling', async (t) => {
  t.strictSame(answerFor('{"jsonrpc":"2.0","id":1,"method":"ping","__proto__":{"x":1}}'),
    { jsonrpc: '2.0', id: null, error: { code: -32700, message: "Parse error: forbidden key '__proto__' (prototype poisoning)" } })
  t.match(answerFor('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","arguments":{"files":[{"path":"a","\\u005f_proto__":{}}]}}}'),
    { error: { code: -32700, message: "Parse error: forbidden key 'params.arguments.files[0].__proto__' (prototype poisoning)" } })
  t.match(answerFor('{"jsonrpc":"2.0","id":1,"method":"x","params":{"constructor":{"prototype":{"polluted":true}}}}'),
    { error: { code: -32700, message: "Parse error: forbidden key 'params.constructor.prototype' (prototype poisoning)" } })
  t.match(answerFor('{"a b":{"__proto__":1}}'), { error: { message: /'\["a b"\]\.__proto__'/ } })
  t.equal(({} as Record<string, unknown>).polluted, undefined)
  t.equal(({} as Record<string, unknown>).x, undefined)
})

t.test('a key named constructor without a prototype inside, or __proto__ as a value, is ordinary data', async (t) => {
  const ok = parseMessage('{"constructor":{"name":"x"},"v":"__proto__","w":["constructor"]}')

  t.ok(ok.ok)
  // Compared as text: tap's deep equality reads `constructor` as the object's class.
  t.equal(JSON.stringify((ok as { message: unknown }).message), '{"constructor":{"name":"x"},"v":"__proto__","w":["constructor"]}')
})

t.test('any JSON value with a __proto__ key planted at any depth is refused; without one it parses unchanged', async (t) => {
  // Plants an own `__proto__` key in the object reached by `route` (indices modulo the children found).
  const plant = (value: unknown, route: number[], spelling: string): string | undefined => {
    const root: unknown = structuredClone(value)
    let node = root
    for (const step of route) {
      const children = typeof node === 'object' && node !== null ? Object.values(node).filter(v => typeof v === 'object' && v !== null) : []
      if (children.length === 0) break
      node = children[step % children.length]
    }
    if (typeof node !== 'object' || node === null || Array.isArray(node)) return undefined
    Object.defineProperty(node, '__proto__', { value: { p: 1 }, enumerable: true, configurable: true, writable: true })
    return JSON.stringify(root).replace('"__proto__":', `"${spelling}":`)
  }
  const clean = fc.jsonValue().filter(v => !/__proto__|constructor/.test(JSON.stringify(v)))
  fc.assert(fc.property(clean, fc.array(fc.nat(), { maxLength: 6 }), fc.constantFrom('__proto__', '\\u005F\\u005Fproto__'), (value, route, key) => {
    const parsed = parseMessage(JSON.stringify(value))
    if (!parsed.ok || JSON.stringify(parsed.message) !== JSON.stringify(value)) return false
    const planted = plant(value, route, key)
    if (planted === undefined) return true
    const bad = parseMessage(planted)
    return !bad.ok && /^Parse error: forbidden key '.*__proto__' \(prototype poisoning\)$/.test(bad.error.message)
  }), runs(500))
  t.pass('500 values')
})

t.test('malformed envelopes: one answer each, id null unless the request id was readable', async (t) => {
  const cases: Array<[string, number, string, unknown]> = [
    ['{"jsonrpc":', -32700, 'Parse error: the message is not valid JSON', null],
    ['', -32700, 'Parse error: the message is empty', null],
    ['[{"jsonrpc":"2.0","id":1,"method":"ping"}]', -32600, 'Invalid Request: JSON-RPC batches are not supported', null],
    ['"ping"', -32600, 'Invalid Request: expected a JSON-RPC 2.0 object', null],
    ['null', -32600, 'Invalid Request: expected a JSON-RPC 2.0 object', null],
    ['{"id":1,"method":"ping"}', -32600, 'Invalid Request: expected a JSON-RPC 2.0 object', null],
    ['{"jsonrpc":"1.0","id":1,"method":"ping"}', -32600, 'Invalid Request: expected a JSON-RPC 2.0 object', null],
    ['{"jsonrpc":"2.0","id":1,"method":7}', -32600, 'Invalid Request: method must be a string', null],
    ['{"jsonrpc":"2.0","id":1.5,"method":"ping"}', -32600, 'Invalid Request: id must be a string or an integer', null],
    ['{"jsonrpc":"2.0","id":null,"method":"ping"}', -32600, 'Invalid Request: id must be a string or an integer', null],
    ['{"jsonrpc":"2.0","id":{},"method":"ping"}', -32600, 'Invalid Request: id must be a string or an integer', null],
    ['{"jsonrpc":"2.0","id":3,"method":"ping","params":[1]}', -32602, 'Invalid params: params must be an object', 3],
    ['{"jsonrpc":"2.0","id":"a","method":"ping","params":null}', -32602, 'Invalid params: params must be an object', 'a'],
    ['{"jsonrpc":"2.0","method":"notifications/cancelled","params":"x"}', -32602, 'Invalid params: params must be an object', null],
    ['{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"m"}}', -32600, 'Invalid Request: expected a method, or exactly one of result/error for a known id', null],
    ['{"jsonrpc":"2.0","id":1}', -32600, 'Invalid Request: expected a method, or exactly one of result/error for a known id', null],
    ['{"jsonrpc":"2.0","id":null,"result":{}}', -32600, 'Invalid Request: expected a method, or exactly one of result/error for a known id', null],
    ['{"jsonrpc":"2.0","id":1,"error":"boom"}', -32600, 'Invalid Request: error must be an object', null]
  ]
  for (const [text, code, message, id] of cases) {
    t.strictSame(answerFor(text), { jsonrpc: '2.0', id, error: { code, message } }, text)
  }
})

t.test('classify sorts valid messages by kind, with params defaulting to {}', async (t) => {
  t.match(classify({ jsonrpc: '2.0', id: 'x', method: 'ping' }), { kind: 'request', id: 'x', method: 'ping', params: {} })
  t.match(classify({ jsonrpc: '2.0', method: 'notifications/initialized' }), { kind: 'notification', params: {} })
  t.match(classify({ jsonrpc: '2.0', id: 4, result: {} }), { kind: 'response', id: 4, result: {} })
  t.match(classify({ jsonrpc: '2.0', id: 4, error: { code: 1, message: 'no' } }), { kind: 'response', error: { code: 1 } })
})

t.test('a UTF-8 BOM is skipped, as Fastify did', async (t) => {
  const parsed = parseMessage(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"a":1}')]))

  t.strictSame(parsed, { ok: true, message: { a: 1 } })
})

t.test('the over-long answer is -32600 without a number, so stdio and HTTP (different caps) say the same', async (t) => {
  t.equal(invalidMessage(null, tooLargeError()), '{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: the message exceeds the size limit"}}')
})

t.test('findPoisonedKey walks deep nesting without recursion', async (t) => {
  const deep: unknown = JSON.parse('['.repeat(5000) + '{"__proto__":1}' + ']'.repeat(5000))

  t.match(findPoisonedKey(deep), /^(\[0\]){5000}\.__proto__$/)
})

t.test('a poisoned key deep under long names is named by the end of its path, clipped to 200 characters', async (t) => {
  const long = 'k'.repeat(300)
  const parsed = parseMessage(`{"jsonrpc":"2.0","id":1,"method":"x","params":{"${long}":{"__proto__":{}}}}`)

  t.equal(parsed.ok, false)
  const message = parsed.ok ? '' : parsed.error.message
  t.match(message, /forbidden key '…k+\.__proto__' \(prototype poisoning\)/)
  t.ok(/'(…[^']*)'/.exec(message)![1].length <= 200)
})
