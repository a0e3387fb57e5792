import t from 'tap'
import pino from 'pino'
import { Writable } from 'node:stream'
import { createDegradations } from '../../src/services/degradations.js'

/** A logger whose lines are kept as objects. */
function capture () {
  const lines: Array<Record<string, any>> = []
  const sink = new Writable({ write (chunk, _enc, done) { lines.push(JSON.parse(String(chunk))); done() } })
  return { log: pino({ level: 'info' }, sink), lines }
}

t.test('a degradation is logged once at warn with its cause, counted on every report, and once at info when it recovers', async (t) => {
  const { log, lines } = capture()
  const register = createDegradations(log)
  const cause = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6379'), { code: 'ECONNREFUSED' })

  register.report('task-heartbeat', 'heartbeats do not reach the task store', cause)
  register.report('task-heartbeat', 'heartbeats do not reach the task store', cause)
  register.report('task-heartbeat', 'heartbeats do not reach the task store', cause)
  const during = register.current()
  register.recover('task-heartbeat')
  register.recover('task-heartbeat')
  await new Promise(resolve => setImmediate(resolve))

  t.match(during, [{ component: 'task-heartbeat', reason: 'heartbeats do not reach the task store', count: 3 }])
  t.same(register.current(), [], 'nothing degraded once it recovered')
  t.equal(register.totals().get('task-heartbeat'), 3, 'the total keeps every report')
  t.equal(lines.length, 2, 'one line when it started, one when it recovered')
  t.match(lines[0], { level: 40, component: 'task-heartbeat', err: { message: /ECONNREFUSED/, code: 'ECONNREFUSED', stack: /Error: connect/ }, msg: 'degraded: task-heartbeat: heartbeats do not reach the task store' })
  t.match(lines[1], { level: 30, component: 'task-heartbeat', reports: 3, msg: 'recovered: task-heartbeat' })
})

t.test('a new reason for the same part is logged again and keeps the time it started; parts are listed oldest first', async (t) => {
  const { log, lines } = capture()
  const register = createDegradations(log)

  register.report('tokenizer', 'a counting thread crashed; estimating')
  const since = register.current()[0].since
  register.report('session-store', 'session records do not reach Redis')
  register.report('tokenizer', 'counting threads crashed three times; estimating until restart')
  await new Promise(resolve => setImmediate(resolve))

  t.same(register.current().map(d => d.component), ['tokenizer', 'session-store'])
  t.match(register.current()[0], { reason: 'counting threads crashed three times; estimating until restart', since, count: 2 })
  t.equal(lines.length, 3)
  t.notOk('err' in lines[0], 'no cause given, none logged')
})
