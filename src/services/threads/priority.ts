import { readlinkSync } from 'node:fs'
import { setPriority } from 'node:os'

/** Niceness of the code index's threads: below ripgrep's (+10), so a search during a build gets the cores. */
export const INDEX_NICENESS = 19

/**
 * Lowers the calling thread's scheduling priority, where the platform allows it per thread: on Linux a
 * thread has its own niceness, set through its thread id (/proc/thread-self names it). Elsewhere, and where
 * it is refused, the thread keeps the process's. Returns whether it took effect.
 */
export function lowerThisThread (niceness = INDEX_NICENESS, threadSelf = '/proc/thread-self'): boolean {
  try {
    const tid = Number(readlinkSync(threadSelf).split('/').at(-1))
    if (!Number.isInteger(tid) || tid <= 0) return false
    setPriority(tid, niceness)
    return true
  } catch {
    return false
  }
}
