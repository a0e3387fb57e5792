// The tokenizer when its counting threads fail: a thread that dies mid-job gives that job the never-low byte
// bound, three deaths in a row stop exact counting for a while (reported to the degradation register, with the
// cause), a thread that cannot even be started does the same at once, and after a back-off one thread is tried
// again: an answer ends the degradation, another death doubles the wait. The dying threads are real threads over
// a module that exits on its jobs; the back-off runs on a clock the test moves.
import fs from 'node:fs'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import t, { type Test } from 'tap'
import { createTokenizer, TOKENIZER_MAX_RETRY_MS, TOKENIZER_RETRY_MS } from '../../../src/services/tokenizer/tokenizer.js'
import { createDegradations } from '../../../src/services/degradations.js'
import * as threads from '../../../src/services/threads/index.js'
import { captureLogger } from '../../helpers/engine.js'

type TokenizerModule = typeof import('../../../src/services/tokenizer/tokenizer.js')

/** A thread module that ends its thread on the first job it is sent. */
function dyingModule (t: Test): URL {
  const dir = t.testdir({ 'dying.mjs': "import { parentPort } from 'node:worker_threads'\nparentPort.on('message', () => process.exit(1))\n" })
  return pathToFileURL(path.join(dir, 'dying.mjs'))
}

/** A thread module that counts characters, and ends its thread on a job while the file `dying` exists beside it. */
function flakyModule (t: Test): { url: URL, heal: () => void } {
  const dir = t.testdir({
    dying: '',
    'flaky.mjs': `import fs from 'node:fs'
import { parentPort } from 'node:worker_threads'
const dying = new URL('./dying', import.meta.url)
parentPort.on('message', ({ id, parts }) => {
  if (fs.existsSync(dying)) process.exit(1)
  parentPort.postMessage({ id, counts: parts.map(p => p.length) })
})
`
  })
  return { url: pathToFileURL(path.join(dir, 'flaky.mjs')), heal: () => fs.rmSync(path.join(dir, 'dying')) }
}

/** A clock that moves only when told. */
function manualClock () {
  let now = 0
  return { now: () => now, advance: (ms: number) => { now += ms } }
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

t.test('three deaths in a row are reported once, with the cause; after the back-off one thread is tried, and a death doubles the wait', async (t) => {
  const { log, lines } = captureLogger()
  const degradations = createDegradations(log)
  const clock = manualClock()
  const tokenizer = createTokenizer({ workers: 1, threadUrl: dyingModule(t), degradations, clock })
  t.teardown(() => tokenizer.close())

  for (let i = 0; i < 5; i++) await tokenizer.countParts(['hello world'])
  const warned = lines.filter(l => l.level === 40)
  t.match(degradations.current(), [{ component: 'tokenizer', reason: /^exact token counts are replaced by byte counts \(never low\): the counting thread failed 3 times in a row/ }])
  t.equal(warned.length, 1, 'one warn line, not one per count')
  t.match(warned[0], { component: 'tokenizer', err: { message: /thread stopped \(exit code 1\)/, stack: /ThreadError/ } }, 'the line carries the error behind it')

  clock.advance(TOKENIZER_RETRY_MS - 1)
  await tokenizer.countParts(['hello world'])
  t.equal(tokenizer.stats().workers, 3, 'before the back-off has passed, no thread is tried')
  clock.advance(1)
  t.strictSame(await tokenizer.countParts(['hello world']), { tokens: [11], exact: [false] })
  t.equal(tokenizer.stats().workers, 4, 'once it has passed, one thread is tried')
  clock.advance(TOKENIZER_RETRY_MS)
  await tokenizer.countParts(['hello world'])
  t.equal(tokenizer.stats().workers, 4, 'it died at once: the next try waits twice as long')
  clock.advance(TOKENIZER_RETRY_MS)
  await tokenizer.countParts(['hello world'])
  t.equal(tokenizer.stats().workers, 5)
  for (let i = 0; i < 6; i++) {
    clock.advance(TOKENIZER_MAX_RETRY_MS)
    await tokenizer.countParts(['hello world'])
  }
  t.equal(tokenizer.stats().workers, 11, 'the wait stops growing at its cap: one try per cap')
  t.equal(lines.filter(l => l.level === 40).length, 1, 'retries that fail add no warn line')
  t.equal(degradations.totals().get('tokenizer'), 9, 'but each is counted')
})

t.test('a retry that gets an answer ends the degradation: exact counts again, an info line, the next stop waits the first back-off again', async (t) => {
  const { log, lines } = captureLogger()
  const degradations = createDegradations(log)
  const clock = manualClock()
  const { url, heal } = flakyModule(t)
  const tokenizer = createTokenizer({ workers: 1, threadUrl: url, degradations, clock })
  t.teardown(() => tokenizer.close())
  for (let i = 0; i < 3; i++) await tokenizer.countParts(['abc'])
  t.equal(degradations.current().length, 1)

  heal()
  clock.advance(TOKENIZER_RETRY_MS)
  const counted = await tokenizer.countParts(['abcd'])

  t.strictSame(counted, { tokens: [4], exact: [true] }, 'counted by a thread again')
  t.strictSame(degradations.current(), [])
  t.match(lines.filter(l => l.level === 30), [{ component: 'tokenizer', msg: 'recovered: tokenizer' }])
  t.strictSame(await tokenizer.countParts(['abcde']), { tokens: [5], exact: [true] })
})

t.test('an answer between deaths resets the count: only three in a row stop counting', async (t) => {
  const degradations = createDegradations(captureLogger().log)
  const { url, heal } = flakyModule(t)
  const tokenizer = createTokenizer({ workers: 1, threadUrl: url, degradations, clock: manualClock() })
  t.teardown(() => tokenizer.close())
  const dying = new URL('./dying', url)

  for (let round = 0; round < 3; round++) {
    for (let i = 0; i < 2; i++) t.strictSame((await tokenizer.countParts(['abc'])).exact, [false])
    heal()
    t.strictSame((await tokenizer.countParts(['abc'])).exact, [true])
    fs.writeFileSync(dying, '')
  }

  t.strictSame(degradations.current(), [], 'two deaths, an answer, two deaths …: never three in a row')
})

t.test('a thread that cannot be started: counts fall back at once, reported; no second attempt before the back-off', async (t) => {
  let attempts = 0
  const { createTokenizer } = await t.mockImport<TokenizerModule>('../../../src/services/tokenizer/tokenizer.js', {
    '../../../src/services/threads/index.js': { ...threads, startThread: () => { attempts++; throw Object.assign(new Error('worker threads unavailable'), { code: 'ERR_WORKER_INIT_FAILED' }) } }
  })
  const { log, lines } = captureLogger()
  const degradations = createDegradations(log)
  const clock = manualClock()
  const tokenizer = createTokenizer({ degradations, clock })

  t.strictSame(await tokenizer.countParts(['abc']), { tokens: [3], exact: [false] })
  t.strictSame(await tokenizer.countParts(['abcd']), { tokens: [4], exact: [false] })
  t.equal(attempts, 1)
  t.match(degradations.current(), [{ component: 'tokenizer', reason: /no counting thread can be started/ }])
  t.match(lines.find(l => l.level === 40), { err: { message: 'worker threads unavailable', code: 'ERR_WORKER_INIT_FAILED' } })
  clock.advance(TOKENIZER_RETRY_MS)
  await tokenizer.countParts(['abc'])
  t.equal(attempts, 2, 'tried again after the back-off')
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
