// get_tool_usage_guide generation: the renderer behind the tool, over the product registry and
// over the 200 synthetic tools, cold (fresh guide: overlay parsed, nothing cached) and warm.
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import pino from 'pino'
import { loadConfig } from '../../dist/src/base/config.js'
import { createUsageGuide, GUIDE_MAX_BYTES } from '../../dist/src/guide/usage-guide.js'
import { PACKAGE_ROOT } from '../../dist/src/package-info.js'
import { createRuntime } from '../../dist/src/runtime.js'
import { median } from './measure.js'
import { oursTools } from './synthetic-tools.js'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))

/** Times `runs` cold renders (a new guide each) and `runs` cached renders of the full guide. */
function timeRenders (catalog, runs) {
  const docsFile = join(PACKAGE_ROOT, 'docs', 'tools.yaml')
  const cold = []
  let output
  for (let i = 0; i < runs; i++) {
    const guide = createUsageGuide({ docsFile })
    const started = performance.now()
    output = guide.render(catalog, {})
    cold.push(performance.now() - started)
  }
  const guide = createUsageGuide({ docsFile })
  guide.render(catalog, {})
  const warm = []
  for (let i = 0; i < runs; i++) {
    const started = performance.now()
    guide.render(catalog, {})
    warm.push(performance.now() - started)
  }
  return { cold: median(cold), warm: median(warm), bytes: Buffer.byteLength(output.text), truncated: output.truncated, tools: catalog.entries().length }
}

/** Guide rows: generation time (goal < 100 ms) and size (goal ≤ 50 KB). */
export async function runGuideBench (options, log) {
  const config = loadConfig({ root: ROOT, port: '0' }, {})
  const silent = pino({ level: 'silent' })
  const product = await createRuntime(config, silent)
  const synthetic = await createRuntime(config, silent, { tools: oursTools({ list: true }), lint: false })
  const rows = []
  for (const [label, runtime] of [['product tools', product], ['synthetic tools', synthetic]]) {
    const r = timeRenders(runtime.services.catalog, options.runs)
    log(`  guide ${label}: cold ${r.cold.toFixed(2)} ms, warm ${r.warm.toFixed(3)} ms, ${r.bytes} B${r.truncated ? ' (index: over the size cap)' : ''}`)
    rows.push({
      name: `get_tool_usage_guide, all ${r.tools} ${label}, cold render`,
      measured: `${r.cold.toFixed(2)} ms`,
      baseline: `100 ms budget (cached: ${r.warm.toFixed(3)} ms)`,
      ratio: undefined,
      goal: '< 100 ms, ≤ 50 KB',
      pass: r.cold < 100 && r.bytes <= GUIDE_MAX_BYTES,
      note: `${(r.bytes / 1024).toFixed(1)} KB${r.truncated ? ', index returned (full guide over 50 KB)' : ''}`
    })
  }
  return rows
}
