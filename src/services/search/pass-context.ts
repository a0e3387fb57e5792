import type { Readable } from 'node:stream'
import type { PinnedPath } from '../workspace/index.js'
import type { LongRecordSink, RgRun } from './rg.js'
import type { SearchTarget } from './target.js'

// What a search's passes run on, in a leaf: passes.ts and seek.ts both take it, and search.ts builds it.

/** One ripgrep pass over a pinned target, as search.ts runs it (in a limiter slot, with the search's deadline). */
export interface Pass {
  target: SearchTarget
  /** Arguments; the target's own (ignore rules) are put first, its operands come after `--`. */
  args: string[]
  separator: number
  onRecord: (record: Buffer) => boolean | undefined
  onLongRecord?: () => LongRecordSink
  /** Bytes for ripgrep's stdin (the pass searches `-`). */
  input?: Readable
  signal?: AbortSignal
}

/** What the passes need from the service. */
export interface PassContext {
  run(pass: Pass): Promise<RgRun>
  /** Pins the searched path again (later pages fetch lines after the first run's pin is closed). */
  pin(): Promise<SearchTarget>
  /** Pins one file of a result through the jail (resolved again, opened no-follow), or undefined when it no longer can be. */
  pinFile(path: string): Promise<PinnedPath | undefined>
  /** The same context for a later call: a deadline of its own (a page read a minute on must not inherit the first call's). */
  renewed(): PassContext
  timeoutMs: number
  maxFiles: number
  /** Bytes of lines one page may hold while its windows are read (past it, the page is cut). */
  maxPageBytes: number
  /** A named file's window that starts this many matches in is sought (seek.ts), not read from the file's start. */
  seekFrom: number
}
