// The tokenizer when its counting threads fail: a thread that dies mid-job gives that job the never-low byte
// bound, three deaths stop the pool for good, and a thread that cannot even be started does the same at once.
// The dying threads are real threads over a module that exits on its first job.
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import t, { type Test } from 'tap'
import { createTokenizer } from '../../../src/services/tokenizer/tokenizer.js'
import * as threads from '../../../src/services/threads/index.js'

type TokenizerModule = typeof import('../../../src/services/tokenizer/tokenizer.js')

/** A thread module that ends its thread on the first job it is sent. */
function dyingModule (t: Test): URL {
  const dir = t.testdir({ 'dying.mjs': "import { parentPort } from 'node:worker_threads'\nparentPort.on('message', () => process.exit(1))\n" })
  return pathToFileURL(path.join(dir, 'dying.mjs'))
}

t.test('a thread that dies mid-job: the job gets the byte bound (not exact); after three deaths no more threads start', async (t) => {
  const tokenizer = createTokenizer({ workers: 1, threadUrl: dyingModule(t) })
  t.teardown(() => tokenizer.close())

  const results = []
  for (let i = 0; i < 5; i++) results.push(await tokenizer.countParts(['hello world']))

  t.ok(results.every(r => r.exact[0] === false && r.tokens[0] === 11), 'every count falls back to the UTF-8 byte length')
  t.equal(tokenizer.stats().workers, 3, 'three threads were tried, then the pool stopped')
  t.equal(tokenizer.stats().jobs, 3, 'the last two calls sent no job')
})

t.test('a thread that cannot be started: counts fall back at once, and no second attempt is made', async (t) => {
  let attempts = 0
  const { createTokenizer } = await t.mockImport<TokenizerModule>('../../../src/services/tokenizer/tokenizer.js', {
    '../../../src/services/threads/index.js': { ...threads, startThread: () => { attempts++; throw new Error('worker threads unavailable') } }
  })
  const tokenizer = createTokenizer()

  t.strictSame(await tokenizer.countParts(['abc']), { tokens: [3], exact: [false] })
  t.strictSame(await tokenizer.countParts(['abcd']), { tokens: [4], exact: [false] })
  t.equal(attempts, 1)
})

t.test('a call whose signal has already fired is refused before any work', async (t) => {
  const tokenizer = createTokenizer()
  t.teardown(() => tokenizer.close())
  const stopped = new AbortController()
  stopped.abort(new Error('deadline'))

  await t.rejects(tokenizer.countParts(['x'.repeat(10_000)], { signal: stopped.signal }), /deadline/)
  t.equal(tokenizer.stats().jobs, 0)
})

t.test('the third death with calls still queued: no thread is started for them, they get the byte bound', async (t) => {
  const tokenizer = createTokenizer({ workers: 1, threadUrl: dyingModule(t) })
  t.teardown(() => tokenizer.close())

  const results = await Promise.all(Array.from({ length: 5 }, (_, i) => tokenizer.countParts([`call ${i}`])))

  t.same(results.map(r => r.exact[0]), [false, false, false, false, false])
  t.same(results.map(r => r.tokens[0]), [6, 6, 6, 6, 6])
  t.equal(tokenizer.stats().workers, 3)
})
