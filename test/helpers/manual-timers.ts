// Recovery timers a test fires itself, on a clock it moves: backoff is asserted by the delays asked for, never by
// waiting for them.
import type { RecoveryTimers } from '../../src/services/code-index/provider-health.js'

/** Manual timers: `delays` lists every delay asked for; `fire()` runs the pending ones, moving the clock to each. */
export interface ManualTimers {
  timers: RecoveryTimers
  delays: number[]
  readonly pending: number
  advance(ms: number): void
  fire(): void
}

/** Timers that run only when fired, and a clock that moves only when told. */
export function manualTimers (start = Date.UTC(2026, 0, 1, 12)): ManualTimers {
  let now = start
  let last = 0
  const pending = new Map<number, { run: () => void, ms: number }>()
  const delays: number[] = []
  return {
    timers: {
      now: () => now,
      set: (run, ms) => { pending.set(++last, { run, ms }); delays.push(ms); return last },
      clear: (id) => { pending.delete(id as number) }
    },
    delays,
    get pending () { return pending.size },
    advance: (ms) => { now += ms },
    fire () {
      for (const [id, timer] of [...pending]) {
        pending.delete(id)
        now += timer.ms
        timer.run()
      }
    }
  }
}
