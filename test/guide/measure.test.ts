import t from 'tap'
import { fileURLToPath } from 'node:url'
import pino from 'pino'
import { createRuntime } from '../../src/runtime.js'
import { loadConfig } from '../../src/config.js'
import { measureGuide } from '../../src/guide/measure.js'
import { GUIDE_MAX_BYTES } from '../../src/guide/usage-guide.js'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))

t.test('measureGuide reports size and timings of the full guide for every shipped tool', async (t) => {
  const runtime = await createRuntime(loadConfig({ root: ROOT }), pino({ level: 'silent' }))
  const catalog = runtime.registry.services.catalog
  if (catalog === undefined) throw new Error('no catalog')

  const m = measureGuide(catalog, `${ROOT}/docs/tools.yaml`, {}, 5)

  t.equal(m.tools, catalog.entries().length)
  t.ok(m.bytes > 0 && m.bytes <= GUIDE_MAX_BYTES, `${m.bytes} bytes`)
  t.notOk(m.truncated, 'the full guide fits in one answer')
  t.ok(m.coldMs >= 0 && m.warmMedianMs >= 0 && m.uncachedMedianMs >= 0)
  t.comment(`guide: ${m.tools} tools, ${m.bytes} bytes; cold ${m.coldMs.toFixed(2)} ms, uncached ${m.uncachedMedianMs.toFixed(3)} ms, cached ${m.warmMedianMs.toFixed(3)} ms`)
})
