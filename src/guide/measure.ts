import type { ToolCatalog } from '../services/catalog.js'
import { createUsageGuide, type GuideRequest } from './usage-guide.js'

/** Size and generation time of the guide for one request (what the benchmark and the closing note report). */
export interface GuideMeasurement {
  tools: number
  bytes: number
  truncated: boolean
  /** First render on a fresh guide: overlay read + parse + example validation + render. */
  coldMs: number
  /** Median of repeated renders on the same guide (cache hit: header and filter only). */
  warmMedianMs: number
  /** Median of renders with the body cache bypassed (a new filter each time) on a loaded overlay. */
  uncachedMedianMs: number
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]

/** Times the usage guide over a catalog and overlay file; `runs` repeated renders for the medians. */
export function measureGuide (catalog: ToolCatalog, docsFile: string, request: GuideRequest = {}, runs = 50): GuideMeasurement {
  let started = performance.now()
  const guide = createUsageGuide({ docsFile })
  const first = guide.render(catalog, request)
  const coldMs = performance.now() - started

  const warm: number[] = []
  for (let i = 0; i < runs; i++) {
    started = performance.now()
    guide.render(catalog, request)
    warm.push(performance.now() - started)
  }
  const uncached: number[] = []
  const names = catalog.entries().map(e => e.name)
  for (let i = 0; i < runs; i++) {
    // A fresh include_examples/filter combination misses the body cache but reuses the parsed overlay.
    const fresh = createUsageGuide({ docsFile })
    fresh.docs(catalog)
    started = performance.now()
    fresh.render(catalog, { ...request, tool_names: request.tool_names ?? names })
    uncached.push(performance.now() - started)
  }
  return {
    tools: first.metadata.filtered_count,
    bytes: Buffer.byteLength(first.text),
    truncated: first.truncated,
    coldMs,
    warmMedianMs: median(warm),
    uncachedMedianMs: median(uncached)
  }
}
