import { availableParallelism } from 'node:os'
import { createJobThread, threadModule, type JobThread } from '../threads/index.js'
import { emitFrames } from './walk-frames.js'
import type { FolderFrame, WalkAnswer, WalkRequest, WalkResult, WalkSpec, WalkThreads } from './walk-types.js'

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

/** The frames of a split walk's units from every thread's part, as soon as each unit has one (or the first failure). */
async function gather (parts: Array<Promise<WalkAnswer>>, count: number): Promise<{ frames: Record<number, FolderFrame> } | { failed: string }> {
  const frames: Record<number, FolderFrame> = {}
  let answered = 0
  let settled = 0
  return await new Promise((resolve, reject) => {
    const take = (answer: WalkAnswer): void => {
      settled++
      if ('failed' in answer) return resolve(answer)
      // A units part always answers its frames.
      for (const [k, frame] of Object.entries(answer.result.pieces?.frames as Record<number, FolderFrame>)) {
        frames[Number(k)] = frame
        answered++
      }
      // A part still queued behind another walk when every unit has its frame is not waited for (it claims none).
      if (answered === count || settled === parts.length) resolve({ frames })
    }
    for (const part of parts) part.then(take, reject)
  })
}

/** One walk thread (started on its first job); its failures are WalkThreadErrors. */
function startWalkThread (): JobThread<WalkRequest, WalkAnswer> {
  const fail = (why: string): Error => new WalkThreadError(why)
  // No walk is given a signal here (a stop goes through the buffer): a job can end only by the thread ending.
  const ended = (): Error => fail('the walk thread stopped')
  return createJobThread<WalkRequest, WalkAnswer>({
    url: threadModule('walk-worker', import.meta.url),
    name: 'walk-worker',
    data: {},
    heapMb: HEAP_MB,
    errors: { failed: fail, stopped: ended, cancelled: ended }
  })
}

/**
 * Threads for walks, started on the first walk and never keeping the process alive when idle. Each takes one
 * walk at a time; a walk goes to the thread with the fewest. A walk is not ended by killing its thread: an abort
 * is written to a buffer the walk reads at every folder, so it stops within a folder's time and answers with
 * what it walked (as an in-thread walk would) and the thread stays warm for the next.
 *
 * A walk of more than two levels is split over the threads: one reads the start folder and its child folders,
 * then every thread claims the folders below those (units) one at a time from a shared counter, and the answer is
 * put together here from the frames they read, in pre-order with the walk's cap, as one thread would have given it.
 * `start` makes a thread (tests give threads of their own).
 */
export function createWalkThreads (size = Math.min(2, availableParallelism()), start = startWalkThread): WalkThreads {
  const threads = Array.from({ length: size }, start)
  const queued = new Array<number>(size).fill(0)

  /** Runs a job on thread `i`, by default the least busy. */
  async function job (request: WalkRequest, i = queued.indexOf(Math.min(...queued))): Promise<WalkAnswer> {
    queued[i]++
    try {
      return await threads[i].run(request)
    } finally {
      queued[i]--
    }
  }

  async function split (root: WalkRequest['root'], options: WalkSpec, stop: SharedArrayBuffer): Promise<WalkAnswer> {
    const top = await job({ root, options: { ...options, part: { top: true } }, stop })
    if ('failed' in top) return top
    const { frame, units } = top.result.pieces as Required<Pick<NonNullable<WalkResult['pieces']>, 'frame' | 'units'>>
    const part = { units, claim: new SharedArrayBuffer(4) }
    const read = units.length === 0 ? { frames: {} } : await gather(threads.map(async (_, i) => await job({ root, options: { ...options, part }, stop }, i)), units.length)
    if ('failed' in read) return read
    const result: WalkResult = { entries: [], notes: [], truncated: false, skippedHidden: 0, skippedIgnored: 0, skippedIgnoredDirs: 0 }
    emitFrames(frame, read.frames, options, result)
    return { result }
  }

  return {
    async run (root, options, signal) {
      const stop = new SharedArrayBuffer(STOP_BYTES)
      const onAbort = (): void => stopWith(stop, signal?.reason)
      if (signal?.aborted === true) onAbort()
      else signal?.addEventListener('abort', onAbort, { once: true })
      try {
        const answer = size > 1 && options.maxDepth > 2 ? await split(root, options, stop) : await job({ root, options, stop })
        if ('result' in answer) for (const entry of answer.result.entries) entry.fsPath = asBuffer(entry.fsPath)
        return answer
      } finally {
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
