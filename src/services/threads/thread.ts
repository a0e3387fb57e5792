import { Worker } from 'node:worker_threads'
import { errorFromFields, type ErrorFields } from './thread-errors.js'

/** What a thread module is started with: its name (it serves only under that name) and its data. */
export interface ThreadStart<Data = unknown> {
  thread: string
  data: Data
  /** The thread lowers its own scheduling priority to this first (see priority.ts). */
  niceness?: number
}

/**
 * Why a request got no answer: the thread `answered` with an error, `crashed` (or failed to start, or ran out
 * of heap), or `stopped` (it exited, or was ended).
 */
export type ThreadFailure = 'answered' | 'crashed' | 'stopped'

/** The notice a thread module sends once it serves, before any answer (serve.ts). */
export const SERVING = 'serving'

/**
 * The end of a request that did not get its answer. Its `cause` is the error behind it, with the thread's own
 * stack and code: the one the handler threw (`answered`), or the one that ended the thread (`crashed`).
 */
export class ThreadError extends Error {
  readonly failure: ThreadFailure
  /** What the thread said of its error beside the message (a store problem), when it answered. */
  readonly details: Readonly<Record<string, unknown>>

  constructor (message: string, failure: ThreadFailure, details: Record<string, unknown> = {}, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause })
    this.name = 'ThreadError'
    this.failure = failure
    this.details = details
  }
}

/** How to start a thread. */
export interface ThreadOptions<Data> {
  /** The module's name (see `threadModule`): it says so in errors, and the module checks it. */
  name: string
  data: Data
  /** Heap limit of the thread: a hostile input exhausts this, not the server. */
  heapMb?: number
  /** A background thread's niceness (the code index's: below ripgrep's, see priority.ts). */
  niceness?: number
  /** Messages the thread sends on its own, not as an answer (progress, a watched folder changed). */
  onNotice?: (notice: Record<string, unknown>) => void
}

/** A worker thread that answers requests by id; see `startThread`. */
export interface Thread {
  /** Sends a request; resolves with the answer, rejects with a ThreadError. */
  request<Answer extends object>(message: object): Promise<Answer>
  /** True once the module serves (it has handled no request before): until then it has done nothing. */
  readonly serving: boolean
  /** Ends the thread: every request waiting fails as `stopped`. */
  terminate(): Promise<void>
}

/**
 * The URL of a thread module beside the calling one: `name.ts` when the caller runs from the TypeScript sources
 * (threads inherit the source loader), `name.js` in the build (dist/src, or the flat bundle dist/bin, whose
 * entries are named after their modules; the CommonJS bundle's `.cjs` too).
 */
export function threadModule (name: string, here: string): URL {
  return new URL(`./${name}${here.endsWith('.ts') ? '.ts' : '.js'}`, here)
}

interface Waiting {
  resolve: (answer: object) => void
  reject: (err: Error) => void
}

/**
 * Starts a thread module (one that calls `serveThread` under `options.name`). Requests may overlap; each is
 * answered once, by id. The thread keeps the process alive only while a request waits. When it fails to
 * start, crashes or ends, every request waiting fails, and so does every later one, at once: a message to a
 * dead thread is never answered.
 */
export function startThread<Data> (url: URL, options: ThreadOptions<Data>): Thread {
  const start: ThreadStart<Data> = { thread: options.name, data: options.data, niceness: options.niceness }
  const worker = new Worker(url, { workerData: start, ...(options.heapMb === undefined ? {} : { resourceLimits: { maxOldGenerationSizeMb: options.heapMb } }) })
  worker.unref()
  let nextId = 0
  const waiting = new Map<number, Waiting>()
  let dead: ThreadError | undefined
  const settled = (): void => {
    if (waiting.size === 0) worker.unref()
  }
  let serving = false
  worker.on('message', ({ id, error, thrown, details, ...answer }: { id?: number, error?: string, thrown?: ErrorFields, details?: Record<string, unknown> } & Record<string, unknown>) => {
    if (id === undefined) {
      if (answer.notice === SERVING) serving = true
      else options.onNotice?.(answer)
      return
    }
    const job = waiting.get(id)
    // An answer can cross the end of the request it belonged to; that caller has already been told.
    if (job === undefined) return
    waiting.delete(id)
    settled()
    if (error === undefined) job.resolve(answer)
    else job.reject(new ThreadError(error, 'answered', details, thrown === undefined ? undefined : errorFromFields(thrown)))
  })
  const fail = (err: ThreadError): void => {
    dead ??= err
    for (const job of waiting.values()) job.reject(dead)
    waiting.clear()
  }
  // The thread's own error (its stack and code came across with it): the cause of every request it fails.
  worker.on('error', (err) => fail(new ThreadError(err.message, 'crashed', {}, err)))
  // A thread that ended itself (process.exit in it) leaves only its exit code: said when it is not 0.
  worker.on('exit', (code) => fail(new ThreadError(`the ${options.name} thread stopped${code === 0 ? '' : ` (exit code ${code})`}`, 'stopped')))
  return {
    get serving () { return serving },
    async request<Answer extends object> (message: object): Promise<Answer> {
      if (dead !== undefined) throw dead
      const id = ++nextId
      return await new Promise<Answer>((resolve, reject) => {
        waiting.set(id, { resolve: resolve as (answer: object) => void, reject })
        worker.ref()
        worker.postMessage({ ...message, id })
      })
    },
    async terminate () {
      fail(new ThreadError(`the ${options.name} thread was ended`, 'stopped'))
      await worker.terminate()
    }
  }
}
