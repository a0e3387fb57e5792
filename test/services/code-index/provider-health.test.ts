import pino from 'pino'
import t from 'tap'
import { toolError } from '../../../src/base/errors.js'
import { createProviderHealth, processTimers, reasonOf } from '../../../src/services/code-index/provider-health.js'
import { manualTimers } from '../../helpers/manual-timers.js'

const log = pino({ level: 'silent' })
const settle = async (): Promise<void> => { for (let i = 0; i < 5; i++) await new Promise(resolve => setImmediate(resolve)) }

t.test('a failure\'s reason in one line: an embeddings error\'s own, else the message without its code, hint or line breaks', async (t) => {
  t.equal(reasonOf(Object.assign(new Error('long'), { reason: 'the provider answered HTTP 503: busy' })), 'the provider answered HTTP 503: busy')
  t.equal(reasonOf(toolError('EMBEDDINGS_FAILED', 'the model m answered a vector of 8 dimensions', 'restart the server')), 'the model m answered a vector of 8 dimensions.')
  t.equal(reasonOf(new Error('the vector\nthread   failed')), 'the vector thread failed')
  t.equal(reasonOf(new Error('x'.repeat(400))).length, 300)
})

t.test('provider health: a failure schedules one probe at a time, with backoff; an answer ends the outage and cancels the probe', async (t) => {
  const clock = manualTimers()
  let probes = 0
  let answer: Error | undefined = new Error('still down')
  let recovered = 0
  const health = createProviderHealth({
    probe: async () => { probes++; if (answer !== undefined) throw answer },
    onRecovered: () => recovered++,
    log,
    timers: clock.timers,
    firstDelayMs: 1000,
    maxDelayMs: 5000,
    recheckMs: 100
  })
  t.equal(health.outage(), undefined)
  health.answered()
  t.equal(recovered, 0, 'an answer without an outage changes nothing')
  health.failed(new Error('refused'))
  t.match(health.outage(), { reason: 'refused', retryAt: clock.timers.now() + 1000 })
  t.equal(health.known(), health.outage(), 'just seen: known')
  health.failed(new Error('refused again'))
  t.same(clock.delays, [1000], 'a second failure waits for the probe already scheduled')
  t.equal(health.outage()?.reason, 'refused again', 'the reason is the latest')
  clock.advance(100)
  t.equal(health.known(), undefined, 'after recheckMs a call may ask again')
  clock.fire()
  health.failed(new Error('a call failed while the probe runs'))
  await settle()
  t.equal(probes, 1)
  t.same(clock.delays, [1000, 2000], 'the failed probe schedules the next, twice as far; the call during it did not')
  t.equal(health.outage()?.reason, 'still down')
  clock.fire()
  await settle()
  clock.fire()
  await settle()
  clock.fire()
  await settle()
  t.same(clock.delays, [1000, 2000, 4000, 5000, 5000], 'to the cap')
  answer = undefined
  clock.fire()
  await settle()
  t.equal(health.outage(), undefined, 'the probe found it answering')
  t.equal(recovered, 1)
  t.equal(clock.pending, 0)
  health.failed(new Error('down again'))
  t.same(clock.delays.at(-1), 1000, 'a new outage backs off from the start')
  health.answered()
  t.equal(clock.pending, 0, 'an answer from elsewhere cancels the probe')
  t.equal(recovered, 2)
})

t.test('provider health: close() cancels the probe, stops one running, and schedules nothing after', async (t) => {
  const clock = manualTimers()
  let release: (err: Error) => void = () => {}
  const health = createProviderHealth({ probe: async () => await new Promise<void>((resolve, reject) => { release = reject }), onRecovered: () => t.fail('not recovered'), log, timers: clock.timers })
  health.failed(new Error('down'))
  t.same(clock.delays, [60_000], 'a minute by default')
  clock.fire()
  health.close()
  release(new Error('aborted'))
  await settle()
  t.equal(clock.pending, 0, 'a probe that ends after close() schedules nothing')
  health.failed(new Error('late'))
  t.equal(clock.pending, 0, 'nor does a failure after it')
  const pending = createProviderHealth({ probe: async () => {}, onRecovered: () => {}, log, timers: clock.timers })
  pending.failed(new Error('down'))
  t.equal(clock.pending, 1)
  pending.close()
  t.equal(clock.pending, 0, 'a scheduled probe is cancelled')
})

t.test('the process\'s timers are unref\'d and can be cleared', async (t) => {
  let ran = false
  const timer = processTimers.set(() => { ran = true }, 10) as NodeJS.Timeout
  t.equal(timer.hasRef(), false, 'a probe never holds the process open')
  processTimers.clear(timer)
  // Not a wait for time to pass: timers of one delay run in the order they were set, so once this later one has
  // run, the cleared one would have run before it.
  await new Promise(resolve => setTimeout(resolve, 10))
  t.equal(ran, false)
  t.ok(Math.abs(processTimers.now() - Date.now()) < 1000)
})
