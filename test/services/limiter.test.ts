import t from 'tap'
import { getEventListeners } from 'node:events'
import { createLimiter } from '../../src/services/limiter.js'

const gate = () => {
  let open: () => void = () => {}
  const opened = new Promise<void>(resolve => { open = resolve })
  return { opened, open }
}

t.test('runs at most `concurrency` at once, queues the next ones in order, refuses beyond the queue with BUSY', async (t) => {
  const limiter = createLimiter({ search: { concurrency: 2, queue: 1 } })
  const g = gate()
  const order: number[] = []
  const job = (n: number) => limiter.run('search', undefined, async () => { order.push(n); await g.opened; return n })

  const first = job(1)
  const second = job(2)
  const third = job(3)
  await new Promise(resolve => setImmediate(resolve))
  const busy = await job(4).catch((err: { toolCode?: string, message: string }) => err)

  t.same(order, [1, 2], 'the third waits for a slot')
  t.match(limiter.stats().search, { running: 2, queued: 1, refused: 1 })
  t.match(busy, { toolCode: 'BUSY', message: /limit of 2 concurrent searches with 1 more waiting/ })
  g.open()
  t.same(await Promise.all([first, second, third]), [1, 2, 3])
  t.same(order, [1, 2, 3])
  t.match(limiter.stats().search, { running: 0, queued: 0 })
  t.match(limiter.stats().walk, { running: 0, queued: 0, refused: 0 }, 'pools are independent')
})

t.test('a queued call whose signal aborts leaves the queue at once and never runs', async (t) => {
  const limiter = createLimiter({ walk: { concurrency: 1, queue: 4 } })
  const g = gate()
  const running = limiter.run('walk', undefined, () => g.opened)
  const controller = new AbortController()
  let ran = false
  const queued = limiter.run('walk', controller.signal, async () => { ran = true })
  await new Promise(resolve => setImmediate(resolve))
  controller.abort(new Error('deadline passed'))

  await t.rejects(queued, { message: 'deadline passed' })
  t.match(limiter.stats().walk, { running: 1, queued: 0 })
  g.open()
  await running
  t.notOk(ran, 'the aborted call never got a slot')
  t.match(limiter.stats().walk, { running: 0 })
})

t.test('a queued call that gets its slot stops listening to its signal', async (t) => {
  const limiter = createLimiter({ read: { concurrency: 1, queue: 4 } })
  const g = gate()
  const running = limiter.run('read', undefined, () => g.opened)
  const controller = new AbortController()
  const queued = limiter.run('read', controller.signal, async () => 'ran')
  await new Promise(resolve => setImmediate(resolve))
  t.equal(getEventListeners(controller.signal, 'abort').length, 1, 'listening while queued')

  g.open()
  await running

  t.equal(await queued, 'ran')
  t.equal(getEventListeners(controller.signal, 'abort').length, 0, 'a long-lived signal keeps no listener per queued call')
})

t.test('a failing job frees its slot for the next one', async (t) => {
  const limiter = createLimiter({ read: { concurrency: 1, queue: 1 } })
  const failing = limiter.run('read', undefined, async () => { throw new Error('boom') })
  const next = limiter.run('read', undefined, async () => 'next')
  await t.rejects(failing, { message: 'boom' })
  t.equal(await next, 'next')
  t.match(limiter.stats().read, { running: 0, queued: 0 })
})

t.test('work is told how many slots of its kind are in use as it starts, itself included', async (t) => {
  const limiter = createLimiter({ search: { concurrency: 2, queue: 2 } })
  const gates = [gate(), gate(), gate()]
  const seen: number[] = []
  const job = (n: number) => limiter.run('search', undefined, async (running) => { seen.push(running); await gates[n].opened })

  const jobs = [job(0), job(1), job(2)]
  await new Promise(resolve => setImmediate(resolve))
  gates[0].open()
  await jobs[0]
  await new Promise(resolve => setImmediate(resolve))
  gates[1].open()
  gates[2].open()
  await Promise.all(jobs)

  t.same(seen, [1, 2, 2], 'the queued third starts in the slot the first frees, beside the second')
})

t.test('admit refuses with BUSY exactly when run would, so a caller can skip its set-up', async (t) => {
  const limiter = createLimiter({ walk: { concurrency: 1, queue: 1 } })
  const g = gate()

  t.doesNotThrow(() => limiter.admit('walk'), 'a free slot')
  const running = limiter.run('walk', undefined, () => g.opened)
  t.doesNotThrow(() => limiter.admit('walk'), 'room in the queue')
  const queued = limiter.run('walk', undefined, async () => {})
  t.throws(() => limiter.admit('walk'), { name: 'Error', message: /limit of 1 concurrent directory walks/ })
  t.match(limiter.stats().walk, { refused: 1 })
  t.match(limiter.stats().walk, { running: 1, queued: 1 })
  g.open()
  await Promise.all([running, queued])
  t.doesNotThrow(() => limiter.admit('walk'))
})
