import t from 'tap'
import fc from 'fast-check'
import { runs } from '../helpers/property.js'
import { Type } from '@sinclair/typebox'
import { compileArguments } from '../../src/mcp/registry/validate.js'
import { testEngine, initializedSession } from '../helpers/engine.js'
import { tools } from '../../src/tool-list.js'
import { normaliseSchema } from '../../src/mcp/registry/schema.js'

// Shaped like read_files: a list of objects the TypeBox source leaves open, as tools write them.
const Input = Type.Object({
  files: Type.Array(Type.Object({
    path: Type.String({ minLength: 1, description: 'Path' }),
    start_line: Type.Optional(Type.Integer({ minimum: 1, description: 'First line' })),
    end_line: Type.Optional(Type.Integer({ minimum: 1, description: 'Last line' }))
  }), { minItems: 1, maxItems: 3, description: 'Files' }),
  options: Type.Optional(Type.Object({
    depth: Type.Integer({ minimum: 0, maximum: 5, default: 2, description: 'Depth' }),
    mode: Type.Optional(Type.Union([Type.Literal('plain'), Type.Literal('upper')], { description: 'Mode' }))
  }, { description: 'Options' })),
  page_size: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 50, description: 'Page size' })),
  tags: Type.Optional(Type.Array(Type.String(), { default: ['a'], description: 'Tags' })),
  service: Type.Any()
})
const validate = compileArguments(Input, new Set(['service']))

t.test('an unknown property at any depth is UNKNOWN_ARGUMENT naming its JSON path and the valid names', async (t) => {
  t.strictSame(validate({ files: [{ path: 'a', extra: 1 }] }),
    { ok: false, unknown: true, message: 'files[0].extra: unknown argument; valid: path, start_line, end_line' })
  t.strictSame(validate({ files: [{ path: 'a' }, { path: 'b', start_line: 'x', nope: true }] }),
    { ok: false, unknown: true, message: 'files[1].nope: unknown argument; valid: path, start_line, end_line' }, 'an unknown property wins over a type error')
  t.strictSame(validate({ files: [{ path: 'a' }], options: { depth: 1, colour: 'red' } }),
    { ok: false, unknown: true, message: 'options.colour: unknown argument; valid: depth, mode' })
  t.strictSame(validate({ files: [{ path: 'a' }], extra: 1 }),
    { ok: false, unknown: true, message: 'extra: unknown argument; valid arguments: files, options, page_size, tags' })
  t.match(validate({ files: [{ path: 'a' }], service: {} }), { ok: false, unknown: true, message: /^service: unknown argument/ }, 'an injected name cannot be supplied')
})

t.test('any unknown key planted in any nested object is refused, with its path', async (t) => {
  const key = fc.string({ minLength: 1, maxLength: 8 }).filter(k => !['path', 'start_line', 'end_line', 'depth', 'mode'].includes(k) && /^[a-z]+$/.test(k))
  fc.assert(fc.property(fc.integer({ min: 0, max: 2 }), key, fc.boolean(), (index, name, inOptions) => {
    const files: Array<Record<string, unknown>> = [{ path: 'a' }, { path: 'b', start_line: 2 }, { path: 'c' }]
    const args: Record<string, unknown> = { files, options: { depth: 1 } }
    if (inOptions) (args.options as Record<string, unknown>)[name] = 1
    else files[index][name] = 1
    const check = validate(args)
    const where = inOptions ? `options.${name}` : `files[${index}].${name}`
    return !check.ok && check.unknown && check.message.startsWith(`${where}: unknown argument; valid: `)
  }), runs(200))
  t.pass('nested objects are closed')
})

t.test('schema messages name the JSON path and what was received', async (t) => {
  t.strictSame(validate({ files: [{ path: 'a', start_line: 0 }] }), { ok: false, unknown: false, message: 'files[0].start_line: must be >= 1, received 0' })
  t.strictSame(validate({ files: [] }), { ok: false, unknown: false, message: 'files: must have at least 1 item(s), received []' })
  t.strictSame(validate({}), { ok: false, unknown: false, message: 'files: is required' })
  t.strictSame(validate({ files: [{ path: 'a' }], page_size: 500 }), { ok: false, unknown: false, message: 'page_size: must be <= 100, received 500' })
  t.strictSame(validate({ files: [{ path: 'a' }], options: { mode: 'loud' } }), { ok: false, unknown: false, message: 'options.mode: must be one of "plain", "upper", received "loud"' })
  t.strictSame(validate([1]), { ok: false, unknown: false, message: 'arguments: must be an object, received [1]' })
  t.match(validate({ files: [{ path: 'x'.repeat(200), start_line: 'y'.repeat(200) }] }), { message: /received "y+\.\.\.$/ }, 'long values are cut')
})

t.test('null means absent for an optional argument; defaults fill absent ones, nested too', async (t) => {
  const check = validate({ files: [{ path: 'a' }], page_size: null, tags: null, options: {} })

  t.strictSame(check, { ok: true, value: { files: [{ path: 'a' }], page_size: 50, tags: ['a'], options: { depth: 2 } } })
  t.strictSame(validate(null), { ok: false, unknown: false, message: 'files: is required' }, 'null arguments are no arguments')
  t.strictSame(validate({ files: null }), { ok: false, unknown: false, message: 'files: must be an array, received null' }, 'null for a required argument is an error')
  const again = validate({ files: [{ path: 'a' }] })
  ;(again as unknown as { value: { tags: string[] } }).value.tags.push('mutated')
  t.strictSame((validate({ files: [{ path: 'a' }] }) as { value: unknown }).value, { files: [{ path: 'a' }], page_size: 50, tags: ['a'] }, 'a default is never shared between calls')
})

t.test('null means absent for an optional property at any depth, as at the top; a required one stays an error; the input is left as it was', async (t) => {
  const input = { files: [{ path: 'a', start_line: null, end_line: 3 }, { path: 'b', end_line: null }], options: { mode: null } }
  t.strictSame(validate(input), { ok: true, value: { files: [{ path: 'a', end_line: 3 }, { path: 'b' }], options: { depth: 2 }, page_size: 50, tags: ['a'] } })
  t.strictSame(input.files[0], { path: 'a', start_line: null, end_line: 3 }, 'the client\'s arguments are not changed')
  t.strictSame(validate({ files: [{ path: null }] }), { ok: false, unknown: false, message: 'files[0].path: must be a string, received null' })
  t.strictSame(validate({ files: [{ path: 'a' }], options: { depth: null } }), { ok: false, unknown: false, message: 'options.depth: must be an integer, received null' }, 'a required property with a default is still required to be an integer')
  const deep = compileArguments(Type.Object({
    groups: Type.Array(Type.Object({
      name: Type.String({ description: 'Name' }),
      free: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'Anything' })),
      where: Type.Optional(Type.Object({ line: Type.Optional(Type.Integer({ description: 'Line' })) }, { description: 'Where' }))
    }), { description: 'Groups' })
  }), new Set())
  t.strictSame(deep({ groups: [{ name: 'a', where: { line: null } }, { name: 'b', where: null }] }), { ok: true, value: { groups: [{ name: 'a', where: {} }, { name: 'b' }] } }, 'three levels down')
  t.strictSame(deep({ groups: [{ name: 'a', free: { line: null } }] }), { ok: true, value: { groups: [{ name: 'a', free: { line: null } }] } }, 'an object whose properties the schema does not name is left as sent')
  const open = compileArguments(Type.Object({
    free: Type.Record(Type.String(), Type.Unknown(), { description: 'Anything' }),
    opts: Type.Object({ a: Type.Optional(Type.Integer({ description: 'A' })) }, { description: 'Options' })
  }), new Set())
  t.strictSame(open({ free: { x: null }, opts: { a: null } }), { ok: true, value: { free: { x: null }, opts: {} } }, 'a map keeps its nulls; an object of optional properties drops them')
  // The class: whatever optional nested properties hold null, the answer is the one for those properties left out.
  const line = fc.oneof(fc.constant(null), fc.constant(undefined), fc.integer({ min: 1, max: 9 }))
  fc.assert(fc.property(fc.array(fc.record({ path: fc.constantFrom('a', 'b'), start_line: line, end_line: line }), { minLength: 1, maxLength: 3 }), (files) => {
    const omitted = files.map(f => Object.fromEntries(Object.entries(f).filter(([, v]) => v !== null && v !== undefined)))
    const present = files.map(f => Object.fromEntries(Object.entries(f).filter(([, v]) => v !== undefined)))
    return JSON.stringify(validate({ files: present })) === JSON.stringify(validate({ files: omitted }))
  }), runs(200))
})

t.test('every real tool: a key planted in any object of any of its examples is UNKNOWN_ARGUMENT', async (t) => {
  let planted = 0
  for (const tool of tools) {
    const { injected } = normaliseSchema(tool.input)
    const check = compileArguments(tool.input, new Set(Object.keys(injected)))
    for (const example of tool.examples ?? []) {
      t.ok(check(example.arguments).ok, `${tool.name} example validates`)
      // Every object inside the example, reached by a path of keys/indices.
      const objects: Array<Array<string | number>> = []
      const collect = (v: unknown, path: Array<string | number>): void => {
        if (Array.isArray(v)) v.forEach((x, i) => collect(x, [...path, i]))
        else if (typeof v === 'object' && v !== null) {
          objects.push(path)
          for (const [k, x] of Object.entries(v)) collect(x, [...path, k])
        }
      }
      collect(example.arguments, [])
      for (const path of objects) {
        const args = structuredClone(example.arguments) as Record<string, unknown>
        const target = path.reduce<any>((node, step) => node[step], args)
        target.zz_extra = 1
        const result = check(args)
        const where = path.reduce<string>((out, s) => typeof s === 'number' ? `${out}[${s}]` : out === '' ? s : `${out}.${s}`, '')
        t.match(result, { ok: false, unknown: true, message: `${where === '' ? '' : `${where}.`}zz_extra: unknown argument` }, `${tool.name} ${where || '(arguments)'}`)
        planted++
      }
    }
  }
  t.ok(planted > 5, `${planted} objects checked`)
})

t.test('over tools/call, a nested unknown property is an UNKNOWN_ARGUMENT tool error', async (t) => {
  const engine = testEngine({
    tools: [{
      name: 'nested_tool',
      title: 'Nested',
      category: 'guide',
      description: 'Takes a list of objects, for the nested closure test.',
      annotations: {},
      input: Type.Object({ files: Type.Array(Type.Object({ path: Type.String({ description: 'Path' }) }), { description: 'Files' }) }),
      run: () => ({ content: [{ type: 'text', text: 'ran' }] })
    }]
  })
  const { call } = await initializedSession(engine)

  const res = await call('tools/call', { name: 'nested_tool', arguments: { files: [{ path: 'a', extra: 1 }] } })

  t.equal(res.result.isError, true)
  t.match(res.result.content[0].text, /^ERROR UNKNOWN_ARGUMENT: files\[0\]\.extra: unknown argument; valid: path\./)
})

t.test('every kind of schema violation gets a message that names the field, the rule and what was sent', async (t) => {
  const Everything = Type.Object({
    num: Type.Optional(Type.Number({ minimum: 0, maximum: 1, description: 'A number' })),
    int: Type.Optional(Type.Integer({ minimum: 2, maximum: 3, description: 'An integer' })),
    str: Type.Optional(Type.String({ minLength: 2, maxLength: 3, pattern: '^[a-z]+$', description: 'A word' })),
    flag: Type.Optional(Type.Boolean({ description: 'A flag' })),
    list: Type.Optional(Type.Array(Type.String(), { minItems: 1, maxItems: 2, description: 'A list' })),
    obj: Type.Optional(Type.Object({ inner: Type.String({ description: 'Inner' }) }, { description: 'An object' })),
    empty: Type.Optional(Type.Object({}, { description: 'Takes nothing' })),
    mode: Type.Optional(Type.Union([Type.Literal('a'), Type.Literal('b')], { description: 'A mode' })),
    shape: Type.Optional(Type.Union([Type.String(), Type.Integer()], { description: 'Text or a count' })),
    exact: Type.Optional(Type.Literal('only', { description: 'The one value' })),
    tagged: Type.Optional(Type.Null({ description: 'Always null' }))
  })
  const check = compileArguments(Everything, new Set())
  const message = (args: unknown): string => {
    const result = check(args)
    return result.ok ? 'ok' : result.message
  }

  t.equal(message({ num: 2 }), 'num: must be <= 1, received 2')
  t.equal(message({ num: -1 }), 'num: must be >= 0, received -1')
  t.equal(message({ num: 'x' }), 'num: must be a number, received "x"')
  t.equal(message({ int: 4 }), 'int: must be <= 3, received 4')
  t.equal(message({ int: 1 }), 'int: must be >= 2, received 1')
  t.equal(message({ int: 2.5 }), 'int: must be an integer, received 2.5')
  t.equal(message({ str: 'a' }), 'str: must be at least 2 character(s) long, received "a"')
  t.equal(message({ str: 'abcd' }), 'str: must be at most 3 characters long, received "abcd"')
  t.equal(message({ str: 'A1' }), 'str: must match /^[a-z]+$/, received "A1"')
  t.equal(message({ str: 5 }), 'str: must be a string, received 5')
  t.equal(message({ flag: 'yes' }), 'flag: must be true or false, received "yes"')
  t.equal(message({ list: 'a' }), 'list: must be an array, received "a"')
  t.equal(message({ list: [] }), 'list: must have at least 1 item(s), received []')
  t.equal(message({ list: ['a', 'b', 'c'] }), 'list: must have at most 2 items, received ["a","b","c"]')
  t.equal(message({ obj: 1 }), 'obj: must be an object, received 1')
  t.equal(message({ obj: {} }), 'obj.inner: is required')
  t.equal(message({ empty: { x: 1 } }), 'empty.x: unknown argument; this object takes no properties')
  t.equal(message({ mode: 'c' }), 'mode: must be one of "a", "b", received "c"')
  t.equal(message({ shape: true }), 'shape: does not match any allowed shape, received true')
  t.equal(message({ exact: 'other' }), 'exact: must be "only", received "other"')
  t.match(message({ tagged: 1 }), /^tagged: expected null, received 1$/, 'other rules fall back to TypeBox\'s own wording')
  t.equal(message({ str: 'x'.repeat(200) }), `str: must be at most 3 characters long, received "${'x'.repeat(76)}...`, 'long values are cut')
  t.equal(message(5), 'arguments: must be an object, received 5')
  t.equal(message([]), 'arguments: must be an object, received []')
  t.equal(message('text'), 'arguments: must be an object, received "text"')
  t.equal(message(undefined), 'ok', 'no arguments at all is an empty object')
  t.equal(message(null), 'ok')

  const none = compileArguments(Type.Object({}), new Set())
  t.strictSame(none({ x: 1 }), { ok: false, unknown: true, message: 'x: unknown argument; this tool takes no arguments' })
})

t.test('a huge invalid argument reports its first error without walking every error', async (t) => {
  const check = compileArguments(Type.Object({ ids: Type.Array(Type.Integer({ description: 'An id' }), { description: 'Ids' }) }), new Set())
  t.strictSame(check({ ids: Array.from({ length: 5000 }, (_, i) => `x${i}`) }), { ok: false, unknown: false, message: 'ids[0]: must be an integer, received "x0"' })
})

/** An array nested `depth` deep around a string. */
const deepArray = (depth: number): unknown => {
  let v: unknown = 'x'
  for (let i = 0; i < depth; i++) v = [v]
  return v
}
/** An object nested `depth` deep, each level under the key `a`. */
const deepObject = (depth: number): unknown => {
  let v: unknown = 1
  for (let i = 0; i < depth; i++) v = { a: v }
  return v
}
/** Longest message an argument error may have: field (≤ 160), rule, and what was received (≤ 80). */
const MAX_MESSAGE = 600

t.test('an argument nested 50,000 arrays deep is INVALID_ARGUMENT naming the field, not a crash in the message', async (t) => {
  const readFiles = tools.find(tool => tool.name === 'read_files')!
  const check = compileArguments(readFiles.input, new Set(Object.keys(normaliseSchema(readFiles.input).injected)))

  const deep = check({ files: deepArray(50_000) })
  const deepInside = check({ files: [{ path: 'a', start_line: deepObject(50_000) }] })
  const atLimit = check({ files: [{ path: 'a', start_line: deepArray(62) }] })

  t.match(deep, { ok: false, unknown: false, message: /^files: must not nest arrays or objects more than 64 levels deep, received \[{77}\.\.\.$/ })
  t.match(deepInside, { ok: false, unknown: false, message: /^files: must not nest .*, received \[\{"path":"a","start_line":\{"a":\{"a":/ })
  t.match(atLimit, { ok: false, unknown: false, message: /^files\[0\]\.start_line: must be an integer, received \[{62}"x"\]{12}\.\.\.$/ }, 'at the limit, the schema\'s own rule, the value cut')
  // Value.Default clones the whole value: a tool with defaults below the top (this file's Input) is guarded too.
  t.match(validate({ files: [{ path: 'a' }], options: deepObject(50_000) }), { ok: false, message: /^options: must not nest/ })
})

t.test('field names and values in messages are bounded and one line: long keys, odd keys, long strings', async (t) => {
  const long = 'k'.repeat(100_000)

  const unknownTop = validate({ files: [{ path: 'a' }], [long]: 1 })
  const unknownNested = validate({ files: [{ path: 'a', [`bad\nkey${long}`]: 1 }] })
  const longValue = validate({ files: [{ path: 'a', start_line: 'é'.repeat(1_000_000) }] })
  const wide = validate({ files: [{ path: 'a', start_line: Array.from({ length: 200_000 }, (_, i) => ({ [`key${i}`]: i })) }] })

  t.match(unknownTop, { ok: false, unknown: true, message: /^k{39}…: unknown argument; valid arguments: files, options, page_size, tags$/ })
  t.match(unknownNested, { ok: false, unknown: true, message: /^files\[0\]\["bad\\nkeyk{32}…"\]: unknown argument; valid: path, start_line, end_line$/ })
  t.match(longValue, { ok: false, message: /^files\[0\]\.start_line: must be an integer, received "é{76}\.\.\.$/ })
  t.match(wide, { ok: false, message: /^files\[0\]\.start_line: must be an integer, received \[\{"key0":0\},\{"key1":1\},/ })
  for (const r of [unknownTop, unknownNested, longValue, wide]) t.ok(!r.ok && r.message.length < 200 && !r.message.includes('\n'), 'short, one line')
})

t.test('property: any hostile argument shape, in any place of any real tool\'s arguments, gets a bounded INVALID_ARGUMENT or UNKNOWN_ARGUMENT, never a throw', async (t) => {
  const checks = tools.map(tool => ({ tool, check: compileArguments(tool.input, new Set(Object.keys(normaliseSchema(tool.input).injected))) }))
  const depth = fc.constantFrom(65, 1_000, 50_000)
  const length = fc.constantFrom(81, 10_000, 1_000_000)
  const hostile = fc.oneof(
    depth.map(deepArray),
    depth.map(deepObject),
    fc.tuple(depth, depth).map(([a, b]) => [deepObject(a), deepArray(b)]),
    length.map(n => '\u2028"\\\n😀'.repeat(Math.ceil(n / 6))),
    length.map(n => ({ [`${'q'.repeat(n)}\n`]: 'v' })),
    length.map(n => Array.from({ length: Math.min(n, 100_000) }, (_, i) => i % 3 === 0 ? { i, s: 'y'.repeat(50) } : [i])),
    fc.jsonValue({ maxDepth: 6 })
  )
  // Where it goes: a top-level argument (declared or not), or any place inside one of the tool's examples.
  const place = fc.record({ tool: fc.nat(checks.length - 1), key: fc.oneof(fc.nat(20), fc.string({ maxLength: 12 })), example: fc.nat(4), step: fc.array(fc.nat(), { maxLength: 6 }) })
  fc.assert(fc.property(place, hostile, ({ tool: i, key, example, step }, value) => {
    const { tool, check } = checks[i]
    const names = Object.keys(tool.input.properties)
    const args: Record<string, unknown> = structuredClone(tool.examples?.[example % Math.max(1, tool.examples.length)]?.arguments ?? {})
    if (typeof key === 'number') {
      // Down into the example by the steps, replacing what is there (or adding under the last key).
      let node: Record<string, unknown> = args
      let at = names[key % names.length] ?? 'x'
      for (const s of step) {
        const next = node[at]
        if (typeof next !== 'object' || next === null) break
        const keys = Object.keys(next)
        if (keys.length === 0) break
        node = next as Record<string, unknown>
        at = keys[s % keys.length]
      }
      node[at] = value
    } else {
      args[key] = value
    }
    const result = check(args)
    if (result.ok) return true
    return result.message.length <= MAX_MESSAGE && !result.message.includes('\n') && /^\S.*: /.test(result.message)
  }), runs(300))
  t.pass('every shape checked')
})
