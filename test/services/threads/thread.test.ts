import path from 'node:path'
import { MessageChannel, type MessagePort } from 'node:worker_threads'
import { pathToFileURL } from 'node:url'
import t, { type Test } from 'tap'
import { createJobThread } from '../../../src/services/threads/job-thread.js'
import { DetailedError, serveAs } from '../../../src/services/threads/serve.js'
import { startThread, threadModule, ThreadError } from '../../../src/services/threads/thread.js'
import { errorFields, errorFromFields, type ErrorFields } from '../../../src/services/threads/thread-errors.js'

// The one way this server runs a thread: a module that serves requests by id (serve.ts), started and asked by
// startThread, with the job thread (one job at a time, ended on abort) built on it.

/** Thread modules written for one test, by file name. */
function modules (t: Test, files: Record<string, string>): (name: string) => URL {
  const dir = t.testdir(files)
  return (name) => pathToFileURL(path.join(dir, name))
}

/** A module serving like serve.ts does, without importing it (the thread runs plain JavaScript). */
const ECHO = `
import { parentPort, workerData } from 'node:worker_threads'
parentPort.postMessage({ notice: 'started', name: workerData.thread, data: workerData.data, niceness: workerData.niceness })
parentPort.postMessage({ notice: 'serving' })
parentPort.on('message', ({ id, ...request }) => {
  if (request.fail) parentPort.postMessage({ id, error: 'refused', details: { problem: 'full' } })
  else if (request.exit) process.exit(3)
  else if (request.throw) setImmediate(() => { throw Object.assign(new Error('crashed here'), { code: 'E_HERE' }) })
  else if (request.never) {}
  else if (request.twice) { parentPort.postMessage({ id, n: 1 }); parentPort.postMessage({ id, n: 2 }) }
  else parentPort.postMessage({ id, echoed: request })
})
`

t.test('threadModule: the source module from the sources, the built one beside a build or bundle', async (t) => {
  t.equal(threadModule('index-worker', 'file:///app/src/services/code-index/code-index.ts').href, 'file:///app/src/services/code-index/index-worker.ts')
  t.equal(threadModule('index-worker', 'file:///app/dist/src/services/code-index/code-index.js').href, 'file:///app/dist/src/services/code-index/index-worker.js')
  t.equal(threadModule('parser-worker', 'file:///app/dist/bin/chunk-X.js').href, 'file:///app/dist/bin/parser-worker.js', 'the bundle\'s entries sit beside its chunks')
  t.equal(threadModule('parser-worker', 'file:///app/dist/bin/stdio.cjs').href, 'file:///app/dist/bin/parser-worker.js', 'the CommonJS bundle loads the ESM entries')
})

t.test('startThread: answers by id, notices apart, error answers with their details, every kind of end', async (t) => {
  const url = modules(t, { 'echo.mjs': ECHO })('echo.mjs')
  const notices: Array<Record<string, unknown>> = []
  const thread = startThread(url, { name: 'echo', data: { n: 1 }, niceness: 7, onNotice: (n) => notices.push(n) })
  t.equal(thread.serving, false, 'not serving before the module said so')

  const [a, b] = await Promise.all([thread.request({ x: 1 }), thread.request({ x: 2 })])
  t.same([a, b], [{ echoed: { x: 1 } }, { echoed: { x: 2 } }], 'overlapping requests each get their own answer')
  t.same(notices, [{ notice: 'started', name: 'echo', data: { n: 1 }, niceness: 7 }], 'the module is told its name, data and niceness')
  t.equal(thread.serving, true, 'its serving notice is the helper\'s own, not passed on')
  const refused = await thread.request({ fail: true }).catch((err: unknown) => err)
  t.ok(refused instanceof ThreadError)
  t.match(refused, { message: 'refused', failure: 'answered', details: { problem: 'full' } })
  t.same(await thread.request({ x: 3 }), { echoed: { x: 3 } }, 'an error answer leaves the thread serving')
  t.same(await thread.request({ twice: true }), { n: 1 }, 'the first answer counts')
  t.same(await thread.request({ x: 4 }), { echoed: { x: 4 } }, 'a second answer to the same request is passed by')

  const waiting = thread.request({ never: true })
  const exited = await thread.request({ exit: true }).catch((err: unknown) => err)
  t.match(exited, { message: 'the echo thread stopped (exit code 3)', failure: 'stopped' })
  await t.rejects(waiting, { name: 'ThreadError', failure: 'stopped' }, 'a request waiting when the thread ends fails too')
  await t.rejects(thread.request({ x: 5 }), { message: 'the echo thread stopped (exit code 3)' }, 'and so does every later one, at once')

  const crashing = startThread(url, { name: 'echo', data: null })
  const crashed = await crashing.request({ throw: true }).catch((err: unknown) => err) as ThreadError
  t.match(crashed, { message: 'crashed here', failure: 'crashed' })
  t.match(crashed.cause, { message: 'crashed here', code: 'E_HERE', stack: /echo\.mjs/ }, 'a crash keeps the thread\'s own error as its cause: its code, and its stack in the thread')

  const ended = startThread(url, { name: 'echo', data: null })
  const pending = t.rejects(ended.request({ never: true }), { message: 'the echo thread was ended', failure: 'stopped' })
  await ended.terminate()
  await pending

  const missing = startThread(new URL('./no-such-module.mjs', url), { name: 'missing', data: null })
  await t.rejects(missing.request({}), { name: 'ThreadError', failure: 'crashed' }, 'a module that cannot load fails its requests')
})

t.test('an error a handler throws reaches the caller as the cause of its ThreadError: name, stack and code from the thread, and its own causes', async (t) => {
  const serve = pathToFileURL(path.resolve('src/services/threads/serve.ts')).href
  const url = modules(t, {
    'thrower.mjs': `import { serveAs } from ${JSON.stringify(serve)}
class StoreError extends Error { name = 'StoreError' }
function writeIndex () { throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' }) }
serveAs('thrower', () => (request) => {
  if (request.odd) throw 42
  try { writeIndex() } catch (err) { throw Object.assign(new StoreError('the index cannot be written', { cause: err }), { code: 'E_STORE' }) }
})
`
  })('thrower.mjs')
  const thread = startThread(url, { name: 'thrower', data: null })
  t.teardown(() => thread.terminate())

  const err = await thread.request({}).catch((e: unknown) => e) as ThreadError
  const odd = await thread.request({ odd: true }).catch((e: unknown) => e) as ThreadError

  t.match(err, { name: 'ThreadError', failure: 'answered', message: 'the index cannot be written' })
  const cause = err.cause as Error & { code?: string }
  t.ok(cause instanceof Error)
  t.match(cause, { name: 'StoreError', message: 'the index cannot be written', code: 'E_STORE' })
  t.match(cause.stack, /thrower\.mjs/, 'the stack is the thread\'s, where it was thrown')
  t.match(cause.cause, { message: 'ENOSPC: no space left on device, write', code: 'ENOSPC', stack: /writeIndex/ }, 'and so is the cause below it')
  t.match(odd.cause, { name: 'Error', message: '42' }, 'a thrown value that is no Error is its text')
})

t.test('errorFields: causes are carried a few deep, a cycle ends', async (t) => {
  const a = new Error('a')
  const b = new Error('b', { cause: a })
  a.cause = b

  const fields = errorFields(b)

  let depth = 0
  for (let f: ErrorFields | undefined = fields; f !== undefined; f = f.cause) depth++
  t.equal(depth, 5, 'the error and four causes')
  t.notOk('code' in errorFields(Object.assign(new Error('x'), { code: { not: 'a code' } })), 'a code that is not a string or a number is left out')
  t.equal((errorFromFields(errorFields(Object.assign(new Error('x'), { code: 3 }))) as Error & { code?: number }).code, 3, 'a numeric code crosses too')
  const stackless = new Error('no stack')
  stackless.stack = undefined
  t.strictSame(errorFromFields(errorFields(stackless)).message, 'no stack')
})

t.test('startThread: a heap limit ends a thread that outgrows it, not the process', async (t) => {
  const url = modules(t, { 'hog.mjs': "import { parentPort } from 'node:worker_threads'\nconst kept = []\nparentPort.on('message', () => { for (;;) kept.push(new Array(1e5).fill(kept.length)) })\n" })('hog.mjs')
  const thread = startThread(url, { name: 'hog', data: null, heapMb: 16 })
  await t.rejects(thread.request({}), { failure: 'crashed', message: /memory/i })
})

t.test('serveAs: serves only when started under its name, lowers its priority first, answers errors with details', async (t) => {
  const channel = new MessageChannel()
  t.teardown(() => { channel.port1.close() })
  const lowered: number[] = []
  const handler = (data: { base: number }, notify: (n: Record<string, unknown>) => void) => {
    notify({ notice: 'ready', base: data.base })
    return async (request: { n?: number, detailed?: boolean, plain?: boolean, odd?: boolean }) => {
      if (request.detailed === true) throw new DetailedError('disk full', { problem: 'full' })
      if (request.plain === true) throw new Error('plain')
      // eslint-disable-next-line no-throw-literal -- what a handler may throw that is no Error
      if (request.odd === true) throw 'odd'
      return { sum: data.base + (request.n ?? 0) }
    }
  }
  t.equal(serveAs('adder', handler, { thread: 'adder', data: { base: 1 } }, null), false, 'no port: the main thread serves nothing')
  t.equal(serveAs('adder', handler, { thread: 'other', data: { base: 1 } }, channel.port2), false, 'another module\'s thread serves nothing')
  t.equal(serveAs('adder', handler, undefined, channel.port2), false)
  t.same(lowered, [])

  t.equal(serveAs('adder', handler, { thread: 'adder', data: { base: 40 }, niceness: 19 }, channel.port2, (n) => lowered.push(n)), true)
  t.same(lowered, [19], 'the thread lowered itself before serving')
  const replies = collect(channel.port1, 6)
  for (const [id, request] of [[1, { n: 2 }], [2, { detailed: true }], [3, { plain: true }], [4, { odd: true }]] as const) channel.port1.postMessage({ id, ...request })
  t.match(await replies, [
    { notice: 'ready', base: 40 },
    { notice: 'serving' },
    { sum: 42, id: 1 },
    { id: 2, error: 'disk full', thrown: { name: 'Error', message: 'disk full', stack: String }, details: { problem: 'full' } },
    { id: 3, error: 'plain', thrown: { name: 'Error', message: 'plain', stack: String } },
    { id: 4, error: 'odd', thrown: { name: 'Error', message: 'odd' } }
  ])
  channel.port2.close()
})

/** The next `count` messages on a port, in order. */
async function collect (port: MessagePort, count: number): Promise<unknown[]> {
  const seen: unknown[] = []
  return await new Promise(resolve => {
    port.on('message', (message) => {
      seen.push(message)
      if (seen.length === count) resolve(seen)
    })
  })
}

t.test('the job thread: one job at a time, failures told apart, an abandoned job ends its thread, close', async (t) => {
  const url = modules(t, { 'echo.mjs': ECHO })('echo.mjs')
  const errors = {
    failed: (why: string, crashed: boolean) => new Error(`failed (${crashed ? 'crashed' : 'answered'}): ${why}`, crashed ? undefined : { cause: 'its own' }),
    stopped: () => new Error('stopped'),
    cancelled: () => new Error('cancelled')
  }
  const jobs = createJobThread<Record<string, unknown>, { echoed: object }>({ url, name: 'echo', data: null, heapMb: 64, errors })

  t.same(await jobs.run({ x: 1 }), { echoed: { x: 1 } })
  await t.rejects(jobs.run({ fail: true }), { message: 'failed (answered): refused', cause: 'its own' }, 'an error that names its own cause keeps it')
  const crash = await jobs.run({ throw: true }).catch((err: unknown) => err) as Error
  t.match(crash, { message: 'failed (crashed): crashed here' })
  t.match(crash.cause, { name: 'ThreadError', failure: 'crashed', cause: { code: 'E_HERE' } }, 'the caller\'s error has the thread\'s failure as its cause, and that the thread\'s own error')
  t.same(await jobs.run({ x: 2 }), { echoed: { x: 2 } }, 'a fresh thread after the crash')
  await t.rejects(jobs.run({ exit: true }), { message: 'stopped', cause: { failure: 'stopped' } })

  const controller = new AbortController()
  const stuck = jobs.run({ never: true }, controller.signal)
  const queued = jobs.run({ x: 3 })
  // The stuck job is in flight within the microtasks of run() (nothing runs before it): abort it a turn later.
  setImmediate(() => controller.abort())
  await t.rejects(stuck, { message: 'cancelled' })
  t.same(await queued, { echoed: { x: 3 } }, 'the next job runs on a fresh thread')
  t.same(await jobs.run({ x: 4 }, new AbortController().signal), { echoed: { x: 4 } }, 'a signal that never fires changes nothing')
  await t.rejects(jobs.run({ x: 5 }, controller.signal), { name: 'AbortError' }, 'an aborted signal is refused before any work')

  const running = jobs.run({ x: 6 })
  t.same(await running, { echoed: { x: 6 } })
  const inFlight = t.rejects(jobs.run({ never: true }), { message: 'stopped' }, 'close ends the job in flight')
  // A turn for it to be sent (the job chain orders the next one behind it either way).
  await new Promise(resolve => setImmediate(resolve))
  const queuedBefore = t.rejects(jobs.run({ x: 7 }), { message: 'stopped' }, 'and fails those queued behind it')
  await jobs.close()
  await Promise.all([inFlight, queuedBefore])
  t.same(await jobs.run({ x: 8 }), { echoed: { x: 8 } }, 'a job after close starts the thread again')
  await jobs.close()
  await jobs.close()
})

t.test('job thread with depth 2: a second job is handed over while the first is in the thread; close fails both', async (t) => {
  const url = modules(t, { 'echo.mjs': ECHO })('echo.mjs')
  const errors = { failed: (why: string) => new Error(why), stopped: () => new Error('stopped'), cancelled: () => new Error('cancelled') }
  const jobs = createJobThread<Record<string, unknown>, { echoed: object }>({ url, name: 'echo', data: null, heapMb: 64, errors, depth: 2 })

  const stuck = t.rejects(jobs.run({ never: true }), { message: 'stopped' })
  t.same(await jobs.run({ x: 1 }), { echoed: { x: 1 } }, 'answered though the first job never is (at depth 1 it would wait behind it)')
  const second = t.rejects(jobs.run({ never: true }), { message: 'stopped' })
  const queued = t.rejects(jobs.run({ x: 2 }), { message: 'stopped' }, 'a third waits for a slot, and fails with the close')
  await new Promise(resolve => setImmediate(resolve))
  await jobs.close()
  await Promise.all([stuck, second, queued])
})
