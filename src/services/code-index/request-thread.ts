import { Worker } from 'node:worker_threads'
import type { StoreProblem } from './store-errors.js'

/**
 * A worker thread answering requests, each once, by id: `{ id, ...answer }` or `{ id, error, problem? }` — the
 * rejection then carries `problem` when the thread said the error was a store problem (a full disk).
 */
export interface RequestThread {
  /** Sends a request; resolves with the answer (without its id), rejects with the thread's error or its death. */
  request<T extends object>(message: object): Promise<T>
  terminate(): Promise<void>
}

/**
 * The module of one of the index's threads: beside this one in the build (dist/src, or the bundle's dist/bin).
 * Run from the TypeScript sources (the tests), the thread loads the build's copy: worker threads do not get the
 * source loader's hooks, and npm test builds first.
 */
export function threadModule (name: string, here = import.meta.url): URL {
  return here.endsWith('.ts') ? new URL(`../../../dist/src/services/code-index/${name}.js`, here) : new URL(`./${name}.js`, here)
}

/**
 * Starts a thread that never keeps the process alive. Requests may overlap (the thread answers them in order);
 * messages the thread sends on its own go to `onNotice`.
 * When the thread fails to start, crashes or ends, every request waiting fails, and so does every later one,
 * at once: a message to a dead thread would never be answered.
 */
export function startRequestThread (url: URL, workerData: unknown, name: string, onNotice?: (notice: { notice: string }) => void): RequestThread {
  const worker = new Worker(url, { workerData })
  worker.unref()
  let nextId = 0
  const waiting = new Map<number, { resolve: (answer: object) => void, reject: (err: Error) => void }>()
  worker.on('message', ({ id, error, problem, ...answer }: { id?: number, error?: string, problem?: StoreProblem }) => {
    // A message without an id is the thread's own news (a watched folder changed), not an answer.
    if (id === undefined) {
      onNotice?.(answer as { notice: string })
      return
    }
    const job = waiting.get(id) as { resolve: (answer: object) => void, reject: (err: Error) => void }
    waiting.delete(id)
    if (error === undefined) job.resolve(answer)
    else job.reject(Object.assign(new Error(error), problem === undefined ? {} : { problem }))
  })
  let dead: Error | undefined
  const fail = (err: Error): void => {
    dead ??= err
    for (const job of waiting.values()) job.reject(err)
    waiting.clear()
  }
  worker.on('error', fail)
  worker.on('exit', () => fail(new Error(`the ${name} thread stopped`)))
  return {
    async request<T extends object> (message: object): Promise<T> {
      if (dead !== undefined) throw dead
      const id = ++nextId
      return await new Promise<T>((resolve, reject) => {
        waiting.set(id, { resolve: resolve as (answer: object) => void, reject })
        worker.postMessage({ ...message, id })
      })
    },
    terminate: async () => { await worker.terminate() }
  }
}
