import { startThread, type Thread, type ThreadError } from './thread.js'

/** How a job thread's failures reach its callers (a failed or stopped job's error gets the ThreadError as its `cause`). */
export interface JobThreadErrors {
  /** The thread answered a job with an error (`crashed` false) or died of one (`crashed` true). */
  failed: (why: string, crashed: boolean) => Error
  /** The thread ended while a job was in flight. */
  stopped: () => Error
  /** The caller's signal aborted its job. */
  cancelled: () => Error
}

/** What runs in the thread, and how. */
export interface JobThreadOptions<Data> {
  /** The thread module (see `threadModule`) and its name. */
  url: URL
  name: string
  data: Data
  /** Heap limit of the thread: a hostile input exhausts this, not the server. */
  heapMb: number
  /** A background thread's niceness (see priority.ts). */
  niceness?: number
  errors: JobThreadErrors
}

/** Jobs for one worker thread, one at a time. */
export interface JobThread<Request extends object, Result> {
  /** Runs a job: resolves with the thread's answer, or rejects with one of the errors. */
  run(request: Request, signal?: AbortSignal): Promise<Result>
  /** Ends the thread (a job in flight fails as stopped); a later job starts a fresh one. */
  close(): Promise<void>
}

/** `err` with `cause` as its cause (as `new Error(m, { cause })` would set it), unless it already has one. */
function causedBy (err: Error, cause: ThreadError): Error {
  if (err.cause === undefined) Object.defineProperty(err, 'cause', { value: cause, writable: true, configurable: true })
  return err
}

/**
 * A worker thread that does one job at a time: started on the first job, never keeping the process alive when
 * idle, ended — and started afresh for the next job — when a caller abandons its job or the thread dies.
 */
export function createJobThread<Request extends object, Result> (options: JobThreadOptions<unknown>): JobThread<Request, Result> {
  let thread: Thread | undefined
  // One job at a time: a queued one waits on this chain, so ending the thread for an abandoned job never
  // fails another caller's.
  let chain: Promise<unknown> = Promise.resolve()
  // Jobs queued before a close fail as stopped, like the one in flight.
  let closes = 0

  const translate = (err: ThreadError): Error =>
    causedBy(err.failure === 'stopped' ? options.errors.stopped() : options.errors.failed(err.message, err.failure === 'crashed'), err)

  async function runNow (request: Request, epoch: number, signal?: AbortSignal): Promise<Result> {
    signal?.throwIfAborted()
    if (epoch !== closes) throw options.errors.stopped()
    const current = thread ??= startThread(options.url, { name: options.name, data: options.data, heapMb: options.heapMb, niceness: options.niceness })
    const answer = current.request<Result & object>(request).catch((err: ThreadError) => {
      // A crash or the heap limit ended the thread: the next job starts a fresh one.
      if (err.failure !== 'answered' && thread === current) thread = undefined
      throw translate(err)
    })
    if (signal === undefined) return await answer
    return await new Promise<Result>((resolve, reject) => {
      const onAbort = (): void => {
        // The engine answers an aborted call with its own TIMEOUT or CANCELLED; this only ends the wait. The
        // thread may be deep in the job: ending it is the only way to stop the work.
        reject(options.errors.cancelled())
        if (thread === current) thread = undefined
        current.terminate().catch(() => undefined)
      }
      signal.addEventListener('abort', onAbort, { once: true })
      answer.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort))
    })
  }

  return {
    run (request, signal) {
      const epoch = closes
      const result = chain.then(async () => await runNow(request, epoch, signal))
      chain = result.catch(() => undefined)
      return result
    },
    async close () {
      closes++
      const current = thread
      thread = undefined
      await current?.terminate()
    }
  }
}
