import t from 'tap'
import fc from 'fast-check'
import { runs } from '../../helpers/property.js'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { createTokenizer } from '../../../src/services/tokenizer/tokenizer.js'
import { splitAtTokenBoundaries } from '../../../src/services/tokenizer/token-parts.js'
import { waitUntil } from '../../helpers/wait.js'

// The reference: js-tiktoken's own encoder, in this thread.
const require = createRequire(import.meta.url)
const { Tiktoken } = require('js-tiktoken/lite') as { Tiktoken: new (ranks: unknown) => { encode: (text: string, allowed: 'all') => number[] } }
const enc = new Tiktoken(require('js-tiktoken/ranks/cl100k_base'))

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

t.test('counts of parts cut at token boundaries add up to the count of the whole (any text)', async (t) => {
  const tokenizer = createTokenizer({ workers: 1 })
  t.teardown(() => tokenizer.close())
  // Hostile pieces: every class the pre-tokenizer distinguishes, line ends, special tokens, long runs.
  const pieces = ['a', 'Z', 'é', '日本', '😀', '7', '123456', ' ', '  ', '\t', '\n', '\r\n', '\n\n', '\u2028', '\u00a0', "'s", "'LL", '}', '=>', '...', '-', '<|endoftext|>', '<|fim_prefix|>', 'a'.repeat(300), ' '.repeat(40), '='.repeat(90), '\ud800', 'x\u0301']
  const texts = fc.array(fc.constantFrom(...pieces), { maxLength: 60 }).map(a => a.join(''))
  await fc.assert(fc.asyncProperty(texts, fc.integer({ min: 1, max: 40 }), async (text, target) => {
    const parts = splitAtTokenBoundaries(text, target)
    t.equal(parts.join(''), text)
    const { tokens, exact } = await tokenizer.countParts(parts)
    t.ok(exact.every(Boolean))
    const sum = tokens.reduce((a, b) => a + b, 0)
    return sum === enc.encode(text, 'all').length
  }), runs(150))
})

t.test('a cut never lands inside a surrogate pair or makes an empty part', async (t) => {
  // Found by the property above: a search started inside '😀' restarted at its first half, the cut point itself.
  t.strictSame(splitAtTokenBoundaries('\n\n😀', 1), ['\n\n', '😀'])
  t.strictSame(splitAtTokenBoundaries('a 😀 b\n😀😀 c', 1), ['a', ' 😀', ' b\n', '😀😀', ' c'])
})

t.test('the worker merges like js-tiktoken, also on long pieces it would take seconds over', async (t) => {
  const tokenizer = createTokenizer({ workers: 1 })
  t.teardown(() => tokenizer.close())
  const source = readFileSync(new URL('../../../src/services/tokenizer/tokenizer.ts', import.meta.url), 'utf8')
  t.equal(await tokenizer.countExact(source), enc.encode(source, 'all').length, 'real source')
  // js-tiktoken's own merge needs ~0.5 s for 1,600 bytes of one piece (and minutes for 100 KB): ours is O(n log n).
  for (const text of ['a'.repeat(1200), 'xy'.repeat(500), ' '.repeat(900) + 'x', '-'.repeat(700), 'ä'.repeat(400)]) {
    t.equal(await tokenizer.countExact(text), enc.encode(text, 'all').length, `${text.slice(0, 3)}… (${text.length})`)
  }
  const long = 'a'.repeat(30_000)
  const got = await tokenizer.countExact(long)
  t.ok(got > 0 && got < long.length / 4, `a 30,000-letter run is counted (${got} tokens)`)
})

t.test('fair queue: a small count is served after at most the running jobs, not behind queued big ones', async (t) => {
  const tokenizer = createTokenizer({ workers: 1 })
  t.teardown(() => tokenizer.close())
  await tokenizer.countExact('warm up')
  const big = 'const value = compute(alpha, beta) + 42;\n'.repeat(2000) // ~84 KB: about 10 jobs each
  const order: string[] = []
  const bigs = Array.from({ length: 6 }, (_, i) => tokenizer.countExact(big).then(() => order.push(`big${i}`)))
  const jobsBefore = tokenizer.stats().jobs
  const small = tokenizer.countExact('hello world').then(n => { order.push('small'); return { n, jobs: tokenizer.stats().jobs } })
  const { n, jobs } = await small
  await Promise.all(bigs)
  t.equal(n, 2)
  t.equal(order[0], 'small', 'the small count finishes before any big one')
  // At most: the job running when it arrived, its own job, and the next one dispatched as it completed.
  t.ok(jobs - jobsBefore <= 3, `jobs dispatched while it waited: ${jobs - jobsBefore}`)
  t.ok(tokenizer.stats().jobs - jobsBefore >= 60, 'the big counts ran in many small jobs')
})

t.test('an aborted call: queued work is dropped, the running job is not waited for, the promise rejects', async (t) => {
  const tokenizer = createTokenizer({ workers: 1 })
  t.teardown(() => tokenizer.close())
  await tokenizer.countExact('warm up')
  const controller = new AbortController()
  const big = 'let x = 1\n'.repeat(50_000) // 500 KB: ~60 jobs, over the default per-call cap of 256 Ki
  const pending = tokenizer.countExact(big, { signal: controller.signal })
  const before = tokenizer.stats().jobs
  controller.abort(new Error('deadline passed'))
  await t.rejects(pending, { message: 'deadline passed' })
  t.equal(await tokenizer.countExact('hello world'), 2, 'the pool still serves others')
  t.ok(tokenizer.stats().jobs - before <= 2, `jobs sent after the abort: ${tokenizer.stats().jobs - before}`)
  await t.rejects(tokenizer.countExact('hello', { signal: controller.signal }), { message: 'deadline passed' }, 'an aborted signal is refused at once')

  // A call still waiting behind another's job leaves the queue.
  const busy = tokenizer.countExact('let y = 2\n'.repeat(800))
  const waiting = new AbortController()
  const queued = tokenizer.countExact('queued', { signal: waiting.signal })
  t.equal(tokenizer.stats().queued, 1)
  waiting.abort(new Error('gave up'))
  await t.rejects(queued, { message: 'gave up' })
  t.equal(tokenizer.stats().queued, 0)
  t.ok(await busy > 0)
})

t.test('a signal that aborts between two jobs of one call: the next job is refused before it is queued', async (t) => {
  const tokenizer = createTokenizer({ workers: 1 })
  t.teardown(() => tokenizer.close())
  await tokenizer.countExact('warm up')
  // A real abort lands between jobs only from a microtask; a signal that passed the entry check and
  // reads as aborted afterwards stands in for that moment.
  const controller = new AbortController()
  controller.abort(new Error('aborted between jobs'))
  const signal = Object.defineProperty(controller.signal, 'throwIfAborted', { value: () => {} })
  const before = tokenizer.stats().jobs
  await t.rejects(tokenizer.countExact('let x = 1\n'.repeat(10), { signal }), { message: 'aborted between jobs' })
  t.equal(tokenizer.stats().jobs, before, 'nothing was sent to a worker')
})

t.test('per-call cap: beyond it the never-low byte bound is used and marked as not exact', async (t) => {
  const tokenizer = createTokenizer({ workers: 1, maxCallChars: 20_000 })
  t.teardown(() => tokenizer.close())
  const signal = new AbortController().signal
  const line = 'function f () { return 1 }\n'
  const parts = Array.from({ length: 2000 }, () => line) // 54 KB
  const counted = await tokenizer.countParts(parts, { signal })
  const exactCount = counted.exact.filter(Boolean).length
  t.ok(exactCount > 0 && exactCount < parts.length, `${exactCount} parts counted exactly`)
  for (let i = 0; i < parts.length; i++) t.ok(counted.tokens[i] >= (counted.exact[i] ? 1 : Buffer.byteLength(line)))
  t.ok(tokenizer.stats().chars <= 20_000, 'no more than the cap reached the workers')
  const rest = line.repeat(200)
  const again = await tokenizer.countParts([rest], { signal })
  t.strictSame(again, { tokens: [Buffer.byteLength(rest)], exact: [false] }, 'the cap is per call (per signal), not per count')
  const other = await tokenizer.countParts([rest])
  t.strictSame(other.exact, [true], 'another call has its own allowance')
})

t.test('a limit stops counting once it is passed: only about that much text reaches the workers', async (t) => {
  const tokenizer = createTokenizer({ workers: 1 })
  t.teardown(() => tokenizer.close())
  const parts = Array.from({ length: 5000 }, (_, i) => `${i}\tconst value${i} = compute(alpha, beta)\n`)
  const counted = await tokenizer.countParts(parts, { limit: 1000 })
  const sent = tokenizer.stats().chars
  t.ok(sent < 16_000, `chars sent: ${sent} of ${parts.join('').length}`)
  const firstInexact = counted.exact.indexOf(false)
  t.ok(firstInexact > 0)
  t.ok(counted.exact.slice(firstInexact).every(e => !e), 'an exact prefix, then byte bounds')
  t.ok(counted.tokens.slice(0, firstInexact).reduce((a, b) => a + b, 0) > 1000)
})

t.test('the pool grows on demand up to its size', async (t) => {
  const tokenizer = createTokenizer({ workers: 2 })
  t.teardown(() => tokenizer.close())
  t.equal(tokenizer.stats().workers, 0, 'nothing starts before the first count')
  await Promise.all(['a b', 'c d', 'e f'].map(s => tokenizer.countExact(s)))
  t.equal(tokenizer.stats().workers, 2)
})

t.test('a piece too long to send (over 32,768 characters) counts as its bytes, not exact; the rest is exact', async (t) => {
  const tokenizer = createTokenizer({ workers: 1 })
  t.teardown(() => tokenizer.close())
  const long = 'a'.repeat(40_000)

  const alone = await tokenizer.countParts([long])
  const mixed = await tokenizer.countParts([long, 'hello world'])

  t.same(alone, { tokens: [40_000], exact: [false] })
  t.same(mixed, { tokens: [40_000, enc.encode('hello world', 'all').length], exact: [false, true] })
})

t.test('close while jobs run and wait: every pending count settles on the byte bound', async (t) => {
  const tokenizer = createTokenizer({ workers: 1 })
  const big = 'const value = compute(alpha, beta) + 42;\n'.repeat(2000)
  const pending = Array.from({ length: 3 }, () => tokenizer.countParts([big]))
  // Let the first job start so close() finds one running and others queued.
  await waitUntil(() => tokenizer.stats().jobs > 0, 'the first job to start', 30_000, 1)

  await tokenizer.close()
  const results = await Promise.all(pending)

  t.ok(results.every(r => r.tokens[0] === Buffer.byteLength(big) && r.exact[0] === false), 'each falls back whole: a partial sum would be low')
})

t.test('warm() starts one counting thread and counts its sample there before any answer asks for a count', async (t) => {
  const tokenizer = createTokenizer()
  t.teardown(() => tokenizer.close())
  t.same({ workers: tokenizer.stats().workers, jobs: tokenizer.stats().jobs }, { workers: 0, jobs: 0 })
  await tokenizer.warm()
  t.equal(tokenizer.stats().workers, 1)
  t.ok(tokenizer.stats().jobs >= 2, 'the sample was counted (twice) in it')
  t.ok(tokenizer.stats().chars > 2 * 10_000, 'a sample of the size answers hold')
  t.equal(await tokenizer.countExact('hello world'), 2, 'and counts as before')
})
