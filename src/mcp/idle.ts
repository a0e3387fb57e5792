// Shutdown waits for running work to end: each end wakes the waiters, so a drain returns the moment the last
// call or request settles (no polling loop that sleeps past it), and one timer bounds the wait.

/** Waiters for something running (calls, requests) to have all ended; `ended()` is called after each end. */
export class Idle {
  #waiting: Array<() => void> = []

  constructor (private readonly busy: () => boolean) {}

  /** Resolves once nothing runs (at once when nothing does). */
  wait (): Promise<void> {
    if (!this.busy()) return Promise.resolve()
    return new Promise(resolve => { this.#waiting.push(resolve) })
  }

  /** One thing ended: the waiters wake once nothing runs. */
  ended (): void {
    if (this.#waiting.length === 0 || this.busy()) return
    for (const resolve of this.#waiting.splice(0)) resolve()
  }
}

/** A set of running things whose emptying can be awaited (the engine's running calls). */
export class RunningSet<T> extends Set<T> {
  readonly #idle = new Idle(() => this.size > 0)

  override delete (value: T): boolean {
    const had = super.delete(value)
    this.#idle.ended()
    return had
  }

  /** Resolves once the set is empty. */
  empty (): Promise<void> {
    return this.#idle.wait()
  }
}

/** Whether `done` settled within `ms`: one timer, cleared either way (a promise already settled is in time). */
export async function settledWithin (done: Promise<void>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<boolean>(resolve => { timer = setTimeout(resolve, ms, false) })
  try {
    return await Promise.race([done.then(() => true), late])
  } finally {
    clearTimeout(timer)
  }
}
