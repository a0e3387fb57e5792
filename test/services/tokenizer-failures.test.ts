// The tokenizer when its workers fail: a worker that dies mid-job gives that job the never-low byte bound,
// three deaths stop the pool for good, and a Worker that cannot even be constructed does the same at once.
// Workers are replaced by fakes (node:worker_threads mocked) so the failures are exact and immediate.
import { EventEmitter } from 'node:events'
import t from 'tap'

type TokenizerModule = typeof import('../../src/services/tokenizer.js')

/** A Worker that dies on its first job: 'error' and then 'exit', as a crashing thread reports. */
class DyingWorker extends EventEmitter {
  static made = 0
  constructor () { super(); DyingWorker.made++ }
  postMessage (): void {
    setImmediate(() => { this.emit('error', new Error('worker crashed')); this.emit('exit', 1) })
  }

  ref (): void {}
  unref (): void {}
  async terminate (): Promise<number> { return 0 }
}

t.test('a worker that dies mid-job: the job gets the byte bound (not exact); after three deaths no more workers start', async (t) => {
  DyingWorker.made = 0
  const { createTokenizer } = await t.mockImport<TokenizerModule>('../../src/services/tokenizer.js', { 'node:worker_threads': { Worker: DyingWorker } })
  const tokenizer = createTokenizer({ workers: 1 })

  const results = []
  for (let i = 0; i < 5; i++) results.push(await tokenizer.countParts(['hello world']))

  t.ok(results.every(r => r.exact[0] === false && r.tokens[0] === 11), 'every count falls back to the UTF-8 byte length')
  t.equal(DyingWorker.made, 3, 'three workers were tried, then the pool stopped')
  await tokenizer.close()
})

t.test('a Worker that cannot be constructed: counts fall back at once, and no second attempt is made', async (t) => {
  let attempts = 0
  class Unbuildable { constructor () { attempts++; throw new Error('worker threads unavailable') } }
  const { createTokenizer } = await t.mockImport<TokenizerModule>('../../src/services/tokenizer.js', { 'node:worker_threads': { Worker: Unbuildable } })
  const tokenizer = createTokenizer()

  t.strictSame(await tokenizer.countParts(['abc']), { tokens: [3], exact: [false] })
  t.strictSame(await tokenizer.countParts(['abcd']), { tokens: [4], exact: [false] })
  t.equal(attempts, 1)
})

t.test('a call whose signal has already fired is refused before any work', async (t) => {
  const { createTokenizer } = await import('../../src/services/tokenizer.js')
  const tokenizer = createTokenizer()
  t.teardown(() => { tokenizer.close().catch(() => {}) })
  const stopped = new AbortController()
  stopped.abort(new Error('deadline'))

  await t.rejects(tokenizer.countParts(['x'.repeat(10_000)], { signal: stopped.signal }), /deadline/)
  t.equal(tokenizer.stats().jobs, 0)
})

t.test('the third death with calls still queued: no worker is started for them, they get the byte bound', async (t) => {
  DyingWorker.made = 0
  const { createTokenizer } = await t.mockImport<TokenizerModule>('../../src/services/tokenizer.js', { 'node:worker_threads': { Worker: DyingWorker } })
  const tokenizer = createTokenizer({ workers: 1 })

  const results = await Promise.all(Array.from({ length: 5 }, (_, i) => tokenizer.countParts([`call ${i}`])))

  t.same(results.map(r => r.exact[0]), [false, false, false, false, false])
  t.same(results.map(r => r.tokens[0]), [6, 6, 6, 6, 6])
  t.equal(DyingWorker.made, 3)
  await tokenizer.close()
})
