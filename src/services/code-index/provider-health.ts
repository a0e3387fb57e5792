import type { Logger } from '../../base/logger.js'

/** The clock and timers recovery runs on: the process's own unless a test passes its own, to fire them at will. */
export interface RecoveryTimers {
  now(): number
  /** Calls `run` after `ms`; the timer never holds the process open. */
  set(run: () => void, ms: number): unknown
  clear(timer: unknown): void
}

/** The process's clock and timers, unref'd. */
export const processTimers: RecoveryTimers = {
  now: () => Date.now(),
  set: (run, ms) => setTimeout(run, ms).unref(),
  clear: (timer) => clearTimeout(timer as NodeJS.Timeout)
}

/** Why the provider cannot be used now. */
export interface Outage {
  /** In one line: no provider URL, no hint. */
  reason: string
  /** When a contact last failed (ms since the epoch). */
  seen: number
  /** When the server asks the provider again. */
  retryAt: number
}

/** What the server knows of the provider's health, and the timer that asks it again after a failure. */
export interface ProviderHealth {
  /** The outage, or undefined while the provider's last contact succeeded. */
  outage(): Outage | undefined
  /** The outage while a failure was seen less than `recheckMs` ago: a call then does not ask the provider again. */
  known(): Outage | undefined
  /** A contact failed: the outage begins (a probe is scheduled) or goes on. */
  failed(err: unknown): void
  /** A contact succeeded: an outage ends, its probe is cancelled and `onRecovered` runs. */
  answered(): void
  close(): void
}

/** What createProviderHealth needs. */
export interface HealthOptions {
  /** Asks the provider once; rejects when it does not answer with a good vector. */
  probe(signal: AbortSignal): Promise<void>
  /** The provider answers again after an outage. */
  onRecovered(): void
  log: Logger
  timers?: RecoveryTimers
  /** The first probe comes this long after a failure (default 1 min); each probe that fails doubles it. */
  firstDelayMs?: number
  /** The longest wait between probes (default 30 min). */
  maxDelayMs?: number
  /** How long a failure is known: calls in that time rank by words without asking the provider (default 30 s). */
  recheckMs?: number
}

/** A failure's reason in one line: an embeddings error's own, else its message without the code and the hint. */
export function reasonOf (err: unknown): string {
  const reason = (err as { reason?: unknown }).reason
  if (typeof reason === 'string') return reason
  return String((err as Error).message).replace(/^ERROR [A-Z_]+: /, '').replace(/ Hint: .*$/s, '').replace(/\s+/g, ' ').trim().slice(0, 300)
}

/** Health as contacts report it; after a failure, probes with backoff until the provider answers. */
export function createProviderHealth (options: HealthOptions): ProviderHealth {
  const { probe, onRecovered, log, timers = processTimers, firstDelayMs = 60_000, maxDelayMs = 30 * 60_000, recheckMs = 30_000 } = options
  const stop = new AbortController()
  let outage: Outage | undefined
  let timer: unknown
  let probing = false
  /** Probes that failed in this outage: the backoff's exponent. */
  let failedProbes = 0

  function schedule (current: Outage): void {
    const delay = Math.min(maxDelayMs, firstDelayMs * 2 ** failedProbes)
    current.retryAt = timers.now() + delay
    timer = timers.set(() => {
      timer = undefined
      probing = true
      probe(stop.signal).then(() => {
        probing = false
        health.answered()
      }, (err: unknown) => {
        probing = false
        if (stop.signal.aborted) return
        failedProbes++
        log.debug({ err, probes: failedProbes }, 'the embeddings provider still fails')
        health.failed(err)
      })
    }, delay)
  }

  const health: ProviderHealth = {
    outage: () => outage,
    known: () => outage !== undefined && timers.now() - outage.seen < recheckMs ? outage : undefined,
    failed (err) {
      const now = timers.now()
      outage ??= { reason: '', seen: now, retryAt: now }
      outage.reason = reasonOf(err)
      outage.seen = now
      // One probe at a time: a failure seen while one is scheduled or running waits for it.
      if (timer === undefined && !probing && !stop.signal.aborted) schedule(outage)
    },
    answered () {
      if (outage === undefined) return
      log.info({ after: outage.reason }, 'the embeddings provider answers again')
      outage = undefined
      failedProbes = 0
      if (timer !== undefined) timers.clear(timer)
      timer = undefined
      onRecovered()
    },
    close () {
      stop.abort()
      if (timer !== undefined) timers.clear(timer)
      timer = undefined
    }
  }
  return health
}
