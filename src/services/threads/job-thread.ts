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
  /**
   * Jobs handed to the thread at once (default 1): with two, the next job is already in the thread when one
   * ends, so the thread does not wait on its caller being free to send it (the code index's thread writes in
   * between). The thread still does them one at a time.
   */
  depth?: number
  errors: JobThreadErrors
}

/** Jobs for one worker thread, one at a time (see `depth`). */
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
  // `depth` jobs at a time (one by default): a queued one waits for a slot, so ending the thread for an abandoned
  // job never fails a caller's that was not sent yet.
  const depth = options.depth ?? 1
  let running = 0
  const waiting: Array<() => void> = []
  const slot = async (): Promise<void> => {
    if (running < depth) {
      running++
      return
    }
    // A slot is handed over by the job that frees it, so `running` stays the same.
    await new Promise<void>(resolve => waiting.push(resolve))
  }
  const free = (): void => {
    const next = waiting.shift()
    if (next === undefined) running--
    else next()
  }
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
    async run (request, signal) {
      const epoch = closes
      await slot()
      try {
        return await runNow(request, epoch, signal)
      } finally {
        free()
      }
    },
    async close () {
      closes++
      const current = thread
      thread = undefined
      await current?.terminate()
    }
  }
}
