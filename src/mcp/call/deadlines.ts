/** What the sweep aborts: a running call with its deadline. */
export interface Abortable {
  /** Epoch ms after which the sweep aborts the call. */
  deadline: number
  abort(reason: Error, kind: 'timeout'): void
}

// One sweep for every deadline instead of a timer per call (setTimeout/clearTimeout were ~7% of a
// small call); a deadline fires up to TICK_MS late.
const TICK_MS = 25
// Idle ticks kept before the interval stops, so back-to-back calls don't re-arm it each time.
const IDLE_TICKS = 40

/** The deadlines of one server's running calls, swept by one interval that runs only while needed. */
export class Deadlines {
  private readonly watched = new Set<Abortable>()
  private sweeper: NodeJS.Timeout | undefined = undefined
  private idleSweeps = 0

  /** Aborts `call` with a timeout once `deadline` (epoch ms) passes; `ms` is the budget it came from. */
  watch (call: Abortable, deadline: number, ms: number): void {
    call.deadline = deadline
    this.watched.add(call)
    if (this.sweeper === undefined) {
      this.sweeper = setInterval(() => this.sweep(), Math.min(TICK_MS, ms))
      this.sweeper.unref()
    }
  }

  /** Stops watching a call that settled. */
  forget (call: Abortable): void {
    this.watched.delete(call)
  }

  /** Calls being watched now. */
  get size (): number {
    return this.watched.size
  }

  /** True while the interval runs. */
  get sweeping (): boolean {
    return this.sweeper !== undefined
  }

  private sweep (): void {
    const now = Date.now()
    for (const call of this.watched) {
      if (call.deadline <= now) {
        this.watched.delete(call)
        call.abort(new Error('deadline passed'), 'timeout')
      }
    }
    if (this.watched.size > 0) this.idleSweeps = 0
    else if (++this.idleSweeps > IDLE_TICKS) {
      clearInterval(this.sweeper)
      this.sweeper = undefined
      this.idleSweeps = 0
    }
  }
}
