import t from 'tap'
import { Idle, RunningSet, settledWithin } from '../../src/mcp/idle.js'

t.test('a running set is empty at once when nothing runs, and only when its last member is deleted', async (t) => {
  const set = new RunningSet<string>()
  const woken: string[] = []

  await set.empty()
  set.add('a')
  set.add('b')
  const empty = set.empty().then(() => woken.push('empty'))
  set.delete('a')
  await Promise.resolve()
  t.strictSame(woken, [], 'one member still runs')
  t.equal(set.delete('nope'), false, 'deleting a stranger says so and wakes nobody')
  t.equal(set.delete('b'), true)
  await empty

  t.strictSame(woken, ['empty'])
})

t.test('an idle waiter with nobody waiting ignores an end; waiters wake together once nothing runs', async (t) => {
  let busy = 2
  const idle = new Idle(() => busy > 0)
  idle.ended()
  const order: number[] = []

  const first = idle.wait().then(() => order.push(1))
  const second = idle.wait().then(() => order.push(2))
  busy--
  idle.ended()
  await Promise.resolve()
  t.strictSame(order, [], 'one thing still runs')
  busy--
  idle.ended()
  await Promise.all([first, second])

  t.strictSame(order, [1, 2])
})

t.test('settledWithin: a settled promise is in time even with no time; a pending one is not, and no timer is left behind', async (t) => {
  const timers = (): number => process.getActiveResourcesInfo().filter(kind => kind === 'Timeout').length
  const before = timers()

  t.equal(await settledWithin(Promise.resolve(), 0), true)
  t.equal(await settledWithin(new Promise<void>(() => {}), 0), false)
  t.equal(await settledWithin(new Promise<void>(resolve => setImmediate(resolve)), 60_000), true, 'answers when the work settles, not at the bound')

  t.equal(timers(), before, 'each bound timer was cleared')
})
