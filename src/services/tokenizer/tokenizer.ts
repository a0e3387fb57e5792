import { createRequire } from 'node:module'
import { splitAtTokenBoundaries } from './token-parts.js'
import { startThread, threadModule, type Thread, type ThreadError } from '../threads/index.js'
import { systemClock, type Clock } from '../clock.js'
import type { Degradations } from '../degradations.js'
import type { CountThreadData } from './count-worker.js'

/** The BPE encoding used for budgets (cl100k_base: a real GPT-4-family vocabulary; half the load of o200k). */
export const TOKENIZER_ENCODING = 'cl100k_base'
/** Default number of worker threads (sized for 2 cores). */
export const DEFAULT_TOKENIZER_WORKERS = 2
/** Default cap on the characters one call may send to the BPE; beyond it, the byte bound is used. */
export const DEFAULT_MAX_CALL_CHARS = 256 * 1024
/** Characters per job: about 20 ms of BPE, so a queued small request waits at most that long per worker. */
const JOB_CHARS = 8192
/** A stretch this long with no token boundary in it (one giant piece) is bounded by bytes, never sent. */
const MAX_PIECE_CHARS = 32768
/** Counting threads lost in a row (no answer between) that stop exact counting until a retry. */
const MAX_CRASHES = 3
/** How long exact counting stays off before one thread is tried again; doubled by each retry that fails. */
export const TOKENIZER_RETRY_MS = 30_000
/** The longest wait between two retries. */
export const TOKENIZER_MAX_RETRY_MS = 10 * 60_000
/** The component name under which the tokenizer reports to the degradation register. */
export const TOKENIZER_COMPONENT = 'tokenizer'

/** How one count is scheduled and bounded. */
export interface CountOptions {
  /**
   * The call's signal. Counts that share it share one cost cap and one place in the fair queue; when it
   * aborts, its queued work is dropped, a running job is not waited for, and the promise rejects.
   */
  signal?: AbortSignal
  /** Stop counting once the parts counted so far pass this many tokens (the rest keep their byte bound). */
  limit?: number
}

/** Token counts of parts of a text. */
export interface PartTokens {
  /** Per part: the exact count where `exact[i]`, else its UTF-8 byte length (a never-low bound). */
  tokens: number[]
  /** Per part: counted by the BPE (false past the limit, over the call's cap, or when no worker can run). */
  exact: boolean[]
}

/** Scheduler figures, for tests and diagnostics. */
export interface TokenizerStats {
  /** Worker threads started so far. */
  workers: number
  /** Jobs sent to a worker so far. */
  jobs: number
  /** Characters sent to a worker so far. */
  chars: number
  /** Jobs waiting for a worker now. */
  queued: number
}

/** What warm() counts: code and prose of the kinds answers hold (identifiers, punctuation, numbers, words), ~16 KB. */
const WARM_TEXT = Array.from({ length: 160 }, (_, i) => `${i}: export function walk${i} (head?: Item, key = ${i * 7}): number { return head?.next?.key ?? -1 } // the first of ${i} items, skipped when empty\n`).join('')

/** Counts tokens to budget responses. */
export interface Tokenizer {
  /** Encoding name, e.g. `cl100k_base`. */
  readonly encoding: string
  /**
   * A synchronous, never-low estimate: the UTF-8 byte length (every byte-level BPE token covers at least one
   * byte). Text within a budget by this measure needs no exact count.
   */
  count(text: string): number
  /** A quick central estimate (chars / 3.2), for sizing cuts; it may be below the true count. */
  estimate(text: string): number
  /**
   * The BPE token count, computed on the worker pool: exact, unless the call's cap or a failed worker forced
   * the byte bound for some of it (never low either way). Rejects with the signal's reason once it aborts.
   */
  countExact(text: string, options?: CountOptions): Promise<number>
  /**
   * Counts each part of a text cut at token boundaries (see `splitAtTokenBoundaries`; rendered lines that end
   * in '\n' qualify), so that sums of consecutive parts are exact. Counting stops past `options.limit`.
   */
  countParts(parts: readonly string[], options?: CountOptions): Promise<PartTokens>
  /**
   * Starts a counting thread now and counts a generated sample in it twice: its rank tables (a quarter of a second)
   * load, and its counting code is compiled optimized, before the first answer that needs a count.
   */
  warm(): Promise<void>
  /** Scheduler figures. */
  stats(): TokenizerStats
  /** Stops the workers (they are unref'd, so an idle process exits without this). */
  close(): Promise<void>
}

/** Pool size and per-call cost bound. */
export interface TokenizerOptions {
  /** Worker threads, started on demand (each loads the ranks: ~0.3 s of CPU). Default 2. */
  workers?: number
  /** Characters one call (one signal) may send to the BPE in all. Default 256 Ki. */
  maxCallChars?: number
  /** The counting thread's module (default: count-worker beside this module). */
  threadUrl?: URL
  /** Where the tokenizer says that exact counting stopped (threads crashing, or not starting) and that it came back. */
  degradations?: Degradations
  /** Time for the retry back-off (default: the system clock). */
  clock?: Clock
}

/** What one call has used: the fair queue serves the call that has used least first. */
interface Account { sent: number }

interface Job {
  account: Account
  texts: string[]
  chars: number
  seq: number
  done: (counts: number[] | null) => void
}

interface Slot { thread: Thread, job?: Job }

const bytes = (text: string): number => Buffer.byteLength(text, 'utf8')

/** Creates the tokenizer; workers start on the first exact counts, never at startup. */
export function createTokenizer (options: TokenizerOptions = {}): Tokenizer {
  const poolSize = Math.max(1, Math.floor(options.workers ?? DEFAULT_TOKENIZER_WORKERS))
  const maxCallChars = options.maxCallChars ?? DEFAULT_MAX_CALL_CHARS
  const accounts = new WeakMap<AbortSignal, Account>()
  const slots: Slot[] = []
  const queue: Job[] = []
  const stats = { workers: 0, jobs: 0, chars: 0 }
  const { degradations, clock = systemClock } = options
  let closed = false
  let crashes = 0
  let seq = 0
  // Exact counting stopped (threads kept crashing, or none starts): byte bounds until `retryAt`, then one more
  // try. Stopping for good would leave every budget of a long-lived server a byte count (for code, about three
  // times the tokens, so answers cut to a third) for a fault that may have passed; a retry costs one thread start.
  let retryAt: number | undefined
  let retryMs = TOKENIZER_RETRY_MS
  let stopped = false

  /** True while exact counts may be asked for; the first call after the back-off starts the retry. */
  function counting (): boolean {
    if (closed) return false
    if (retryAt === undefined) return true
    if (clock.now() < retryAt) return false
    // The retry: one more loss stops counting again, for twice as long.
    retryAt = undefined
    crashes = MAX_CRASHES - 1
    return true
  }

  /** Exact counting stops for a while: reported (with the error behind it), retried after the back-off. */
  function pause (why: string, err: unknown): void {
    if (stopped) retryMs = Math.min(retryMs * 2, TOKENIZER_MAX_RETRY_MS)
    stopped = true
    retryAt = clock.now() + retryMs
    degradations?.report(TOKENIZER_COMPONENT, `exact token counts are replaced by byte counts (never low): ${why}; one thread is tried again after a back-off (${TOKENIZER_RETRY_MS / 1000} s, doubling to ${TOKENIZER_MAX_RETRY_MS / 60_000} min)`, err)
  }

  /** A thread answered: the losses in a row end, and counting that had stopped is back. */
  function answered (): void {
    crashes = 0
    if (!stopped) return
    stopped = false
    retryMs = TOKENIZER_RETRY_MS
    degradations?.recover(TOKENIZER_COMPONENT)
  }

  function spawn (): Slot | undefined {
    if (!counting()) return undefined
    try {
      const require = createRequire(import.meta.url)
      const data: CountThreadData = { lite: require.resolve('js-tiktoken/lite'), ranks: require.resolve(`js-tiktoken/ranks/${TOKENIZER_ENCODING}`) }
      const slot: Slot = { thread: startThread(options.threadUrl ?? threadModule('count-worker', import.meta.url), { name: 'count-worker', data }) }
      slots.push(slot)
      stats.workers++
      return slot
    } catch (err) {
      pause('no counting thread can be started', err)
      return undefined
    }
  }

  /** Sends a job to an idle slot; a thread that crashed or stopped is dropped (three in a row, and counting stops a while). */
  function send (slot: Slot, job: Job): void {
    slot.job = job
    // Not awaited: the chain's end frees the slot for the next job. The thread's failure is handled in it; what
    // is left is this file's own bookkeeping (no I/O), so a rejection here is a bug for process-faults.ts to log.
    void slot.thread.request<{ counts: number[] }>({ parts: job.texts }).then(
      ({ counts }) => {
        answered()
        return counts
      },
      (err: ThreadError) => {
        if (err.failure !== 'answered') lose(slot, err)
        return null
      }
    ).then((counts) => {
      slot.job = undefined
      job.done(counts)
      dispatch()
    })
  }

  function lose (slot: Slot, err: ThreadError): void {
    const at = slots.indexOf(slot)
    if (at === -1) return
    slots.splice(at, 1)
    if (++crashes >= MAX_CRASHES) pause(`the counting thread failed ${MAX_CRASHES} times in a row`, err)
  }

  /** Least attained service: the call that has sent least goes first, then the shorter job, then the older. Takes it off the (non-empty) queue. */
  function pick (): Job {
    let best = 0
    for (let i = 1; i < queue.length; i++) {
      const a = queue[i]
      const b = queue[best]
      if (a.account.sent < b.account.sent || (a.account.sent === b.account.sent && (a.chars < b.chars || (a.chars === b.chars && a.seq < b.seq)))) best = i
    }
    return queue.splice(best, 1)[0]
  }

  function dispatch (): void {
    while (queue.length > 0) {
      const slot = slots.find(s => s.job === undefined) ?? (slots.length < poolSize ? spawn() : undefined)
      if (slot === undefined) {
        if (slots.length === 0) for (const job of queue.splice(0)) job.done(null)
        return
      }
      const job = pick()
      job.account.sent += job.chars
      stats.jobs++
      stats.chars += job.chars
      send(slot, job)
    }
  }

  /** Runs one job; resolves null when it could not be counted, rejects when the signal aborts first. */
  function run (texts: string[], chars: number, account: Account, signal?: AbortSignal): Promise<number[] | null> {
    return new Promise((resolve, reject) => {
      if (signal?.aborted === true) {
        reject(signal.reason)
        return
      }
      const job: Job = { account, texts, chars, seq: ++seq, done: resolve }
      if (signal !== undefined) {
        const onAbort = (): void => {
          const at = queue.indexOf(job)
          if (at !== -1) queue.splice(at, 1)
          reject(signal.reason)
        }
        signal.addEventListener('abort', onAbort, { once: true })
        job.done = (counts) => {
          signal.removeEventListener('abort', onAbort)
          resolve(counts)
        }
      }
      queue.push(job)
      dispatch()
    })
  }

  function accountFor (signal: AbortSignal | undefined): Account {
    if (signal === undefined) return { sent: 0 }
    let account = accounts.get(signal)
    if (account === undefined) accounts.set(signal, account = { sent: 0 })
    return account
  }

  async function countParts (parts: readonly string[], opts: CountOptions = {}): Promise<PartTokens> {
    const { signal, limit } = opts
    signal?.throwIfAborted()
    const account = accountFor(signal)
    const tokens = parts.map(bytes)
    const exact = parts.map(p => p.length === 0)
    // Units are what a job carries: parts, or pieces of a long part cut at token boundaries.
    const units: Array<{ part: number, text: string }> = []
    parts.forEach((text, part) => {
      if (text.length === 0) tokens[part] = 0
      else if (text.length <= JOB_CHARS) units.push({ part, text })
      else for (const piece of splitAtTokenBoundaries(text, JOB_CHARS)) units.push({ part, text: piece })
    })
    const sums = new Map<number, { tokens: number, chars: number, exact: boolean }>()
    let total = 0
    let at = 0
    const stop = limit ?? Infinity
    for (;;) {
      if (at >= units.length || total > stop || !counting()) break
      const batch: typeof units = []
      let chars = 0
      while (at < units.length && (batch.length === 0 || chars + units[at].text.length <= JOB_CHARS)) {
        chars += units[at].text.length
        batch.push(units[at++])
      }
      const sendable = batch.filter(u => u.text.length <= MAX_PIECE_CHARS)
      const sendChars = sendable.reduce((n, u) => n + u.text.length, 0)
      if (account.sent + sendChars > maxCallChars) break
      const counts = sendable.length > 0 ? await run(sendable.map(u => u.text), sendChars, account, signal) : []
      let next = 0
      for (const unit of batch) {
        const sent = unit.text.length <= MAX_PIECE_CHARS
        const count = sent ? counts?.[next++] : undefined
        const counted = count !== undefined
        const value = count ?? bytes(unit.text)
        const sum = sums.get(unit.part) ?? { tokens: 0, chars: 0, exact: true }
        sum.tokens += value
        sum.chars += unit.text.length
        sum.exact &&= counted
        sums.set(unit.part, sum)
        total += value
      }
      if (counts === null) break
    }
    // A part cut short (limit, cap) keeps its byte bound: a partial sum would be low.
    for (const [part, sum] of sums) {
      if (sum.chars !== parts[part].length) continue
      tokens[part] = sum.tokens
      exact[part] = sum.exact
    }
    return { tokens, exact }
  }

  return {
    encoding: TOKENIZER_ENCODING,
    count: bytes,
    estimate: (text) => Math.ceil(text.length / 3.2),
    async countExact (text, opts) {
      const { tokens } = await countParts([text], opts)
      return tokens[0]
    },
    countParts,
    async warm () {
      for (let round = 0; round < 2; round++) await countParts([WARM_TEXT])
    },
    stats: () => ({ ...stats, queued: queue.length }),
    async close () {
      closed = true
      const all = slots.splice(0)
      for (const job of queue.splice(0)) job.done(null)
      // A job in flight is answered null by its thread's end.
      await Promise.all(all.map(async s => { await s.thread.terminate() }))
    }
  }
}
