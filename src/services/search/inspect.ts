import { toolError } from '../../base/errors.js'
import { displayText } from '../workspace/index.js'
import { classifyRgError, type RgRun } from './rg.js'

const PER_PATH_PROBLEM = /os error|Permission denied|File system loop|No such file|IO error/i

/** What a finished ripgrep run means for its result set. */
export interface RunVerdict {
  /** The deadline cut the run: what was collected is a lower bound. */
  partial: boolean
  /** Set when ripgrep did not finish its work (killed, crashed, output cut): why, in words. */
  failed?: string
  /** Paths ripgrep reported it could not read (permission, vanished, loops). */
  unreadable: number
}

/** Why a run that ended by itself did not finish its work, or undefined when it did. */
function failureOf (r: RgRun): string | undefined {
  if (r.end !== 'exit') return undefined
  if (r.signal !== null) return `ripgrep was killed by ${r.signal} (out of memory, or killed from outside)`
  if (r.code !== 0 && r.code !== 1 && r.code !== 2) return `ripgrep crashed (exit code ${String(r.code)})`
  if (r.truncated) return 'ripgrep\'s output ended in the middle of a record'
  return undefined
}

/**
 * Judges a finished run: a cancelled call throws its reason, regex/glob errors throw their tool error, other
 * ripgrep errors throw SEARCH_FAILED; per-path problems become a counted notice; a deadline marks the set
 * partial; a killed, crashed or cut run is reported in `failed` (the caller decides: partial or error).
 */
export function inspectRun (r: RgRun, pattern: string, notices: string[], opts: { json: boolean, sawSummary: boolean, timeoutMs: number, signal?: AbortSignal }): RunVerdict {
  if (r.end === 'aborted') throw opts.signal?.reason ?? toolError('CANCELLED', 'the search was cancelled')
  let failed = failureOf(r)
  let unreadable = 0
  if (r.code === 2 && failed === undefined) {
    const err = classifyRgError(r.stderr, pattern)
    if (err !== undefined) throw err
    const lines = r.stderr.split('\n').filter(l => l.trim() !== '')
    if (lines.length > 0 && !lines.every(l => PER_PATH_PROBLEM.test(l))) {
      throw toolError('SEARCH_FAILED', `ripgrep failed: ${displayText(lines.slice(0, 3).join('; ')).slice(0, 500)}`, 'check include/exclude and path, then call again')
    }
    unreadable = lines.length
    if (lines.length > 0) {
      notices.push(`${lines.length} path(s) could not be searched (skipped): ${displayText(lines.slice(0, 3).map(l => l.replace(/^rg: /, '')).join('; ')).slice(0, 400)}`)
    }
  }
  // Every complete --json search ends with a summary event, even when some paths could not be read.
  if (failed === undefined && opts.json && !opts.sawSummary) failed = 'ripgrep\'s output ended before its summary'
  if (r.end === 'deadline') {
    notices.push(`search stopped after ${Math.round(opts.timeoutMs / 1000)} s; results are partial — narrow path or include`)
    return { partial: true, unreadable }
  }
  if (r.end === 'shutdown') {
    notices.push('search stopped early: the server is shutting down; results are partial — call again for the rest')
    return { partial: true, unreadable }
  }
  return { partial: false, failed, unreadable }
}

/** The notice or error for a failed run: partial results when some were collected, else SEARCH_FAILED. */
export function failedRun (failed: string, collected: number, notices: string[]): void {
  if (collected === 0) {
    throw toolError('SEARCH_FAILED', `${failed}; the search did not finish, so "no matches" cannot be told`,
      'call again; if it keeps failing, search a smaller path or a narrower include (the server may be short of memory)')
  }
  notices.push(`INCOMPLETE: ${failed}; the search did not finish — these results are partial (a lower bound) and not cached; call again for a complete answer`)
}

/**
 * The notice of a search that took more than half the time a search may take, or undefined: the next one like it,
 * over a larger tree or on a busier machine, would stop with partial results, and the model can narrow it first.
 */
export function slowSearchNotice (spentMs: number, timeoutMs: number, named: boolean): string | undefined {
  if (spentMs <= timeoutMs / 2) return undefined
  const narrow = named ? 'make the pattern more specific' : 'narrow path or include, or make the pattern more specific'
  return `this search took ${(spentMs / 1000).toFixed(1)} s of the ${Math.round(timeoutMs / 1000)} s a search may take; one like it over more files or on a busier machine would stop with partial results — ${narrow}`
}
