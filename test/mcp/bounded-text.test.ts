import t from 'tap'
import { MAX_ARGUMENT_DEPTH, SHOWN_VALUE_CHARS, shownField, shownKey, shownValue, tooDeep } from '../../src/mcp/registry/bounded-text.js'

// What an argument error shows of what a client sent: the JSON text as far as it fits, the field as a short line.

t.test('shownValue: JSON as JSON.stringify writes it while it fits; past the limit its first characters and ...', async (t) => {
  for (const value of [null, true, 0, -1.5, 1e21, 'text', '', [], {}, [1, 'a', null, [2]], { a: { b: [true] }, 'odd key': 'é\n' }]) {
    t.equal(shownValue(value), JSON.stringify(value), JSON.stringify(value))
  }
  const long = { list: Array.from({ length: 50 }, (_, i) => i) }
  const text = JSON.stringify(long)
  t.equal(shownValue(long), `${text.slice(0, SHOWN_VALUE_CHARS - 3)}...`)
  t.equal(shownValue([undefined, () => 1]), '[null,null]', 'what JSON cannot carry is null, as in an array')
})

t.test('shownValue: its cost follows the limit, not the value: 100,000 deep, a million wide, 50 MB of text', async (t) => {
  let deep: unknown = 1
  for (let i = 0; i < 100_000; i++) deep = { k: [deep] }
  const wide = Array.from({ length: 1_000_000 }, (_, i) => ({ i }))
  const huge = 'x'.repeat(50_000_000)

  for (const value of [deep, wide, huge, { [huge]: 1 }]) t.equal(shownValue(value).length, SHOWN_VALUE_CHARS)
})

t.test('shownKey and shownField: names that read as names plainly, others quoted and escaped, each cut, the whole cut', async (t) => {
  t.equal(shownField(['files', 0, 'start_line']), 'files[0].start_line')
  t.equal(shownField(['options', 'page-size', '3']), 'options.page-size[3]')
  t.equal(shownField(['a b', 'c\nd']), '["a b"]["c\\nd"]')
  t.equal(shownKey('k'.repeat(100)), `.${'k'.repeat(39)}…`)
  t.equal(shownKey('k'.repeat(100), true), `${'k'.repeat(39)}…`)
  const many = shownField(Array.from({ length: 50 }, () => 'k'.repeat(60)))
  t.equal(many.length, 160)
  t.ok(many.endsWith('…'))
})

t.test('tooDeep: the key under which arrays and objects nest deeper than the limit, found without recursion', async (t) => {
  const nest = (depth: number): unknown => {
    let v: unknown = 'x'
    for (let i = 0; i < depth; i++) v = i % 2 === 0 ? [v] : { v }
    return v
  }

  t.equal(tooDeep({ a: nest(MAX_ARGUMENT_DEPTH), b: 'plain' }), undefined, 'at the limit')
  t.equal(tooDeep({ a: nest(3), b: [1, nest(MAX_ARGUMENT_DEPTH)] }), 'b', 'one level past it, inside another value')
  t.equal(tooDeep({ a: nest(1_000_000) }), 'a')
  t.equal(tooDeep({ a: nest(5) }, 4), 'a', 'the limit can be given')
})
