import { availableParallelism } from 'node:os'
import { createJobThread, threadModule, type JobThread } from '../threads/index.js'
import type { WalkOptions, WalkResult } from './walk.js'

/** A walk as data: the options without the functions a thread cannot take (find_files and list_directory give data). */
export type WalkSpec = Omit<WalkOptions, 'signal' | 'keepDir' | 'keepEntry' | 'order'>

/** One walk for a walk thread: the root it is in and what to walk; `stop` is shared, see `stopReader`. */
export interface WalkRequest {
  root: { path: string, name: string, prefixed: boolean }
  options: WalkSpec
  stop: SharedArrayBuffer
}

/** A walk thread's answer: the walk, or the fs error code of the folder it was to start from. */
export type WalkAnswer = { result: WalkResult } | { failed: string }

/** Walks on threads of their own (see walk-worker.ts). */
export interface WalkThreads {
  /** Runs a walk on the least busy thread; an abort of `signal` stops it at the next folder, with what it walked. */
  run(root: WalkRequest['root'], options: WalkSpec, signal?: AbortSignal): Promise<WalkAnswer>
  /** Ends the threads (a later walk starts them again). */
  close(): Promise<void>
}

/** Bytes of the stop buffer: a length, then the abort reason's name (ASCII, cut to fit). */
const STOP_BYTES = 64

/** A walk thread's heap: a walk's entries are capped (200,000), their listing far below this. */
const HEAP_MB = 512

/** Writes the abort reason's name into a stop buffer; the walk sees it at its next folder. */
function stopWith (stop: SharedArrayBuffer, reason: unknown): void {
  const name = String((reason as { name?: unknown } | undefined)?.name ?? 'aborted').replace(/[^\x20-\x7e]/g, '?').slice(0, STOP_BYTES - 4)
  new Uint8Array(stop, 4).set(Buffer.from(name, 'latin1'))
  Atomics.store(new Int32Array(stop, 0, 1), 0, name.length)
}

/** The thread's side of a stop buffer: the reason's name once the caller aborted, else undefined. */
export function stopReader (stop: SharedArrayBuffer): () => string | undefined {
  const length = new Int32Array(stop, 0, 1)
  return () => {
    const n = Atomics.load(length, 0)
    return n === 0 ? undefined : Buffer.from(new Uint8Array(stop, 4, n)).toString('latin1')
  }
}

/** A Buffer sent to or from a thread arrives as a plain Uint8Array: make it a Buffer again. */
export function asBuffer<T extends string | Uint8Array> (p: T): string | Buffer {
  return typeof p === 'string' ? p : Buffer.from(p.buffer, p.byteOffset, p.byteLength)
}

/** Failures of a walk thread: the caller walks in its own thread instead. */
export class WalkThreadError extends Error {}

/**
 * Threads for walks, started on the first walk and never keeping the process alive when idle. Each takes one
 * walk at a time; a walk goes to the thread with the fewest. A walk is not ended by killing its thread: an abort
 * is written to a buffer the walk reads at every folder, so it stops within a folder's time and answers with
 * what it walked (as an in-thread walk would) and the thread stays warm for the next.
 */
export function createWalkThreads (size = Math.min(2, availableParallelism())): WalkThreads {
  const fail = (why: string): Error => new WalkThreadError(why)
  // No walk is given a signal here (a stop goes through the buffer): a job can end only by the thread ending.
  const ended = (): Error => fail('the walk thread stopped')
  const threads: Array<JobThread<WalkRequest, WalkAnswer>> = Array.from({ length: size }, () => createJobThread<WalkRequest, WalkAnswer>({
    url: threadModule('walk-worker', import.meta.url),
    name: 'walk-worker',
    data: {},
    heapMb: HEAP_MB,
    errors: { failed: fail, stopped: ended, cancelled: ended }
  }))
  const queued = new Array<number>(size).fill(0)
  return {
    async run (root, options, signal) {
      const stop = new SharedArrayBuffer(STOP_BYTES)
      const onAbort = (): void => stopWith(stop, signal?.reason)
      if (signal?.aborted === true) onAbort()
      else signal?.addEventListener('abort', onAbort, { once: true })
      const i = queued.indexOf(Math.min(...queued))
      queued[i]++
      try {
        const answer = await threads[i].run({ root, options, stop })
        if ('result' in answer) for (const entry of answer.result.entries) entry.fsPath = asBuffer(entry.fsPath)
        return answer
      } finally {
        queued[i]--
        signal?.removeEventListener('abort', onAbort)
      }
    },
    close: async () => { await Promise.all(threads.map(async t => await t.close())) }
  }
}

let shared: WalkThreads | undefined

/** The walk threads every workspace of this process shares (started on the first walk that needs them). */
export function sharedWalkThreads (): WalkThreads {
  shared ??= createWalkThreads()
  return shared
}
