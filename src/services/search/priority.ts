import { readdirSync } from 'node:fs'
import { setPriority } from 'node:os'

/**
 * Niceness of ripgrep children while searches run side by side: the event loop that answers every client is
 * scheduled first when they saturate the cores (a cheap call's p50 under 200 concurrent searches went from 44 ms
 * to 13 ms, idle being 12 ms; `npm run bench -- --only limits`). A lone search keeps the server's priority: at
 * +10 it got a tenth of the share of any other process on a busy machine (the `rg` it is measured against runs
 * at 0), while its own event loop, asleep between ripgrep's few writes, is woken first anyway.
 */
export const SHARED_NICENESS = 10

/**
 * Sets the niceness of every thread of a process. Linux nice is per thread: the main thread goes first, so
 * the threads it starts after inherit it, then the threads it had already started (setPriority on a PID alone
 * left one of ripgrep's two search threads at 0 in one run out of five). Best effort: a process that has just
 * exited, or a platform without /proc, keeps what it has.
 */
export function renice (pid: number, niceness: number): void {
  try {
    setPriority(pid, niceness)
  } catch {
    // It exited (ESRCH) or raising its priority is not allowed: nothing more to do.
    return
  }
  let threads: string[]
  try {
    threads = readdirSync(`/proc/${pid}/task`)
  } catch /* c8 ignore start */ {
    // No /proc (not Linux), or the process exited between the two calls: its main thread was set.
    return
  } /* c8 ignore stop */
  for (const tid of threads) {
    try {
      setPriority(Number(tid), niceness)
    } catch /* c8 ignore start */ {
      // That thread exited between the listing and now.
    } /* c8 ignore stop */
  }
}
