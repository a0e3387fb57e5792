/** Time source injected into tools, so tests can pin it. */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number
}

/** The real clock. */
export const systemClock: Clock = { now: () => Date.now() }
