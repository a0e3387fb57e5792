import t from 'tap'
import { createTokenizer } from '../../src/services/tokenizer.js'

t.test('exact counts come from the real cl100k_base BPE, on a worker thread', async (t) => {
  const tokenizer = createTokenizer()
  t.teardown(() => tokenizer.close())

  t.equal(tokenizer.encoding, 'cl100k_base')
  t.equal(await tokenizer.countExact('hello world'), 2)
  t.equal(await tokenizer.countExact(''), 0)
  t.equal(await tokenizer.countExact('<|endoftext|>'), 1, 'special tokens in text never throw')
  const counts = await Promise.all(['a b c', 'src/app.ts:12: const x = 1'].map(s => tokenizer.countExact(s)))
  t.strictSame(counts, [3, 11])
})

t.test('count is a cheap upper bound that never undercounts', async (t) => {
  const tokenizer = createTokenizer()
  t.teardown(() => tokenizer.close())

  for (const text of ['hello world', 'ünïcödé 日本語 テキスト', 'x'.repeat(1000), '  \n\t{}();'.repeat(50)]) {
    t.ok(tokenizer.count(text) >= await tokenizer.countExact(text), JSON.stringify(text.slice(0, 20)))
  }
  t.equal(tokenizer.count('abc'), 3)
})

t.test('after close, counts fall back to the upper bound', async (t) => {
  const tokenizer = createTokenizer()

  await tokenizer.close()

  t.equal(await tokenizer.countExact('hello world'), 11)
})
