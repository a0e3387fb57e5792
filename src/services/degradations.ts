import type { Logger } from '../base/logger.js'

// A part of the server that keeps serving in a reduced way (exact token counts replaced by estimates, task
// heartbeats or session records not reaching Redis, a key set not reachable) says so here, once: one warn line
// with the cause when it starts (and when its reason changes), one info line when it works again. /readyz lists
// what is degraded now and /metrics counts it, so an operator sees a fault that no client error would show.

/** One part working in a reduced way: why, since when, and how often it was reported. */
export interface Degradation {
  /** The part, e.g. `tokenizer`, `task-heartbeat`, `session-store`. */
  component: string
  /** What does not work and what is done instead, as a sentence part. */
  reason: string
  /** When it started, epoch ms. */
  since: number
  /** Reports since it started (each failure of a retried operation counts). */
  count: number
}

/** Where the parts of one server report that they are degraded, and that they recovered. */
export interface Degradations {
  /** Records that `component` works in a reduced way; logs at warn, with `err` as the cause, when that starts or its reason changes. */
  report(component: string, reason: string, err?: unknown): void
  /** Records that `component` works in full again; logs once at info if it was degraded. */
  recover(component: string): void
  /** What is degraded now, oldest first. */
  current(): Degradation[]
  /** Reports since start, by component (recovered ones included): the counter /metrics serves. */
  totals(): ReadonlyMap<string, number>
}

/** A degradation register that logs to `log`. */
export function createDegradations (log: Logger): Degradations {
  const now = new Map<string, Degradation>()
  const totals = new Map<string, number>()
  return {
    report (component, reason, err) {
      totals.set(component, (totals.get(component) ?? 0) + 1)
      const known = now.get(component)
      if (known !== undefined && known.reason === reason) {
        known.count++
        return
      }
      now.set(component, { component, reason, since: known?.since ?? Date.now(), count: (known?.count ?? 0) + 1 })
      log.warn({ component, reason, ...(err === undefined ? {} : { err }) }, `degraded: ${component}: ${reason}`)
    },
    recover (component) {
      const known = now.get(component)
      if (known === undefined) return
      now.delete(component)
      log.info({ component, degradedMs: Date.now() - known.since, reports: known.count }, `recovered: ${component}`)
    },
    current () {
      return [...now.values()].map(d => ({ ...d }))
    },
    totals () {
      return totals
    }
  }
}
