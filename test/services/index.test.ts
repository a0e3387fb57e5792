import t from 'tap'
import pino from 'pino'
import { loadConfig } from '../../src/config.js'
import { captureLogger } from '../helpers/engine.js'

// createServices: the production services for a config, with ripgrep optional.

t.test('without ripgrep the services come up without search, and the operator is told', async (t) => {
  const { createServices } = await t.mockImport<typeof import('../../src/services/index.js')>('../../src/services/index.js', {
    '../../src/services/search.js': { createSearch: async () => { throw new Error('ripgrep not found on PATH') } }
  })
  const root = t.testdir({ 'a.txt': 'x' })
  const { log, lines } = captureLogger()

  const services = await createServices(loadConfig({ root }, {}), log)

  t.equal(services.search, undefined)
  t.ok(services.workspace !== undefined && services.tokenizer !== undefined)
  t.ok(lines.some(l => l.level === 40 && /ripgrep not available/.test(String(l.msg))))
  await services.tokenizer?.close()
})

t.test('with ripgrep every service is there', async (t) => {
  const { createServices } = await import('../../src/services/index.js')
  const root = t.testdir({ 'a.txt': 'x' })

  const services = await createServices(loadConfig({ root }, {}), pino({ level: 'silent' }))

  t.ok(services.search !== undefined)
  services.search?.close()
  await services.tokenizer?.close()
})
