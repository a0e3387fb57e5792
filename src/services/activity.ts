/** Work a client is waiting for, counted: background work (the code index's build) yields to it. */
export interface Activity {
  /** One more call running; returns the function that ends it. */
  enter(): () => void
  /** Calls running now. */
  readonly running: number
  /** Calls `listener` whenever the count changes. */
  onChange(listener: () => void): void
}

/** A counter of running calls, with listeners. */
export function createActivity (): Activity {
  let running = 0
  const listeners: Array<() => void> = []
  const changed = (): void => { for (const listener of listeners) listener() }
  return {
    enter () {
      running++
      changed()
      let left = false
      return () => {
        if (left) return
        left = true
        running--
        changed()
      }
    },
    get running () { return running },
    onChange (listener) { listeners.push(listener) }
  }
}
