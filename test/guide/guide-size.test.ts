import t from 'tap'
import { fileURLToPath } from 'node:url'
import pino from 'pino'
import { createRuntime } from '../../src/runtime.js'
import { loadConfig } from '../../src/base/config.js'
import { createUsageGuide, GUIDE_MAX_BYTES } from '../../src/guide/usage-guide.js'

// The size of the whole guide is a product limit; its generation time is measured by the benchmark (guide section).

const ROOT = fileURLToPath(new URL('../..', import.meta.url))

t.test('the full guide for every shipped tool fits in one answer, cached or rendered anew', async (t) => {
  const runtime = await createRuntime(loadConfig({ root: ROOT }, {}), pino({ level: 'silent' }))
  t.teardown(() => runtime.close())
  const catalog = runtime.registry.catalog
  const guide = createUsageGuide({ docsFile: `${ROOT}/docs/tools.yaml` })

  const first = guide.render(catalog, {})
  t.equal(first.metadata.filtered_count, catalog.entries().length, 'every tool is in it')
  t.ok(Buffer.byteLength(first.text) <= GUIDE_MAX_BYTES, `${Buffer.byteLength(first.text)} bytes of at most ${GUIDE_MAX_BYTES}`)
  t.notOk(first.truncated, 'nothing was cut')
  // The header line carries the time of each call; the body is the cached part.
  const body = (text: string): string => text.replace(/^Generated \S+/m, 'Generated <time>')
  t.equal(body(guide.render(catalog, {}).text), body(first.text), 'the cached render is the same text')
})
