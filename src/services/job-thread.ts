import { Worker } from 'node:worker_threads'

/** How a job thread's failures reach its callers. */
export interface JobThreadErrors {
  /** The thread answered a job with an error (`crashed` false) or died of one (`crashed` true). */
  failed: (why: string, crashed: boolean) => Error
  /** The thread ended while a job was in flight. */
  stopped: () => Error
  /** The caller's signal aborted its job. */
  cancelled: () => Error
}

/** What runs in the thread, and how. */
export interface JobThreadOptions {
  /** CommonJS source evaluated in the thread (so it survives bundling); it answers `{ id, ...result }` or `{ id, error }`. */
  source: string
  workerData: unknown
  /** Heap limit of the thread: a hostile input exhausts this, not the server. */
  heapMb: number
  errors: JobThreadErrors
}

/** Jobs for one worker thread, one at a time. */
export interface JobThread<Request extends object, Result> {
  /** Runs a job: resolves with the thread's answer (without its id), or rejects with one of the errors. */
  run(request: Request, signal?: AbortSignal): Promise<Result>
}

interface Job {
  resolve: (result: unknown) => void
  reject: (err: Error) => void
}

/**
 * A worker thread that does one job at a time: started on the first job, never keeping the process alive when
 * idle, ended — and started afresh for the next job — when a caller abandons its job or the thread dies.
 */
export function createJobThread<Request extends object, Result> (options: JobThreadOptions): JobThread<Request, Result> {
  let worker: Worker | undefined
  let nextId = 0
  const jobs = new Map<number, Job>()
  // One job at a time: a queued one waits on this chain, so ending the thread for an abandoned job never
  // fails another caller's.
  let chain: Promise<unknown> = Promise.resolve()

  const failAll = (err: Error): void => {
    for (const job of jobs.values()) job.reject(err)
    jobs.clear()
  }
  // An idle thread never keeps the process alive; one with a job in flight does, like any pending I/O.
  const track = (thread: Worker): void => {
    if (jobs.size > 0) thread.ref()
    else thread.unref()
  }
  function start (): Worker {
    const thread = new Worker(options.source, { eval: true, workerData: options.workerData, resourceLimits: { maxOldGenerationSizeMb: options.heapMb } })
    thread.unref()
    thread.on('message', ({ id, error, ...result }: { id: number, error?: string }) => {
      const job = jobs.get(id)
      // An answer can cross the terminate() of the job it belonged to; that caller has already been told.
      /* c8 ignore next */
      if (job === undefined) return
      jobs.delete(id)
      track(thread)
      if (error !== undefined) job.reject(options.errors.failed(error, false))
      else job.resolve(result)
    })
    // A crash or the heap limit ends the thread: its jobs fail, and the next one starts a fresh thread.
    thread.on('error', (err) => failAll(options.errors.failed(err.message, true)))
    thread.on('exit', () => {
      if (worker === thread) worker = undefined
      failAll(options.errors.stopped())
    })
    return thread
  }

  function runNow (request: Request, signal?: AbortSignal): Promise<Result> {
    signal?.throwIfAborted()
    worker ??= start()
    const thread = worker
    const id = ++nextId
    return new Promise<Result>((resolve, reject) => {
      const onAbort = (): void => {
        jobs.delete(id)
        // The engine answers an aborted call with its own TIMEOUT or CANCELLED; this only ends the wait.
        reject(options.errors.cancelled())
        // The thread may be deep in the job: ending it is the only way to stop the work. Jobs go one at a
        // time, so the thread running this one is the current thread.
        worker = undefined
        thread.terminate().catch(() => undefined)
      }
      signal?.addEventListener('abort', onAbort, { once: true })
      const settle = <T>(fn: (v: T) => void) => (v: T): void => {
        signal?.removeEventListener('abort', onAbort)
        fn(v)
      }
      jobs.set(id, { resolve: settle(resolve as (v: unknown) => void), reject: settle(reject) })
      track(thread)
      thread.postMessage({ ...request, id })
    })
  }

  return {
    run (request, signal) {
      const result = chain.then(() => runNow(request, signal))
      chain = result.catch(() => undefined)
      return result
    }
  }
}
