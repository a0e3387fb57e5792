import t from 'tap'
import { captureLogger } from './helpers/engine.js'
import { logFailure } from '../src/base/logger.js'

t.test('logFailure ends a promise nothing awaits: its rejection becomes one error line with the cause and the fields', async (t) => {
  const { log, lines } = captureLogger()
  const cause = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })

  await Promise.reject(cause).catch(logFailure(log, 'task: its end failed', { taskId: 'abc' }))
  await Promise.reject(new Error('plain')).catch(logFailure(log, 'no fields'))

  t.match(lines, [
    { level: 50, msg: 'task: its end failed', taskId: 'abc', err: { code: 'ECONNREFUSED', stack: /^Error: connect ECONNREFUSED\n/ } },
    { level: 50, msg: 'no fields', err: { message: 'plain' } }
  ])
})
