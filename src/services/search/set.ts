import type { HiddenMatches, SearchMode } from './types.js'
import type { SearchLine } from './parse.js'
import type { RgSkipped } from './rg.js'

/** One file of a result set: its lines are read by the page that shows them. */
export interface FileEntry {
  /** Path relative to the root, display form. */
  path: string
  /** Matching lines (content and count modes; -1 in files mode). */
  count: number
}

/** The matching lines a page needs of one counted file: in-file indexes [from, to). */
export interface WindowWant {
  entry: FileEntry
  from: number
  to: number
}

/** The lines a page got of one file: from the context before its first wanted match to the context after its last. */
export interface FileWindow {
  /** In-file index of the first matching line in `lines` (a match before the wanted ones can be context). */
  first: number
  /** Matches and context lines, in order. */
  lines: SearchLine[]
  /** False when the read stopped before the window was complete: `lines` is what came before the cut. */
  whole: boolean
}

/** Why a page's lines were cut short: the search's deadline, the server's shutdown, or the memory a page may hold. */
export type PageCut = 'deadline' | 'shutdown' | 'budget'

/** What a fetch got: a window for every file asked for, and why it stopped early, if it did. */
export interface FetchedWindows {
  windows: Map<FileEntry, FileWindow>
  cut?: PageCut
}

/** Files taken out of a set after the search, by cause (counted in a notice). */
export interface Dropped {
  /** No longer resolves to itself inside the root (moved, removed, replaced by a link). */
  moved: number
  /** A regular file with more than one hard link (refused unless the operator allows them). */
  hardLinked: number
}

/** A sorted result set, cached for pagination while `complete`. */
export interface ResultSet {
  mode: SearchMode
  files: FileEntry[]
  /** prefix[i] = matching lines in files[0..i) (content mode). */
  prefix: number[]
  total: number
  lowerBound: boolean
  notices: string[]
  lineCount: number
  /** False when ripgrep did not finish (killed, crashed, cut): such a set is never cached. */
  complete: boolean
  /** Files ripgrep skipped silently (binary data, over the size cap). */
  skipped: RgSkipped
  /** Files skipped because ripgrep could not read them. */
  unreadable: number
  dropped: Dropped
  /** Matching files hidden by ignore rules, when a probe looked for them. */
  hidden?: HiddenMatches
  /** Reads the windows a page needs of the set's files (content mode); nothing is kept on the set. */
  fetch?: (wants: WindowWant[], signal?: AbortSignal) => Promise<FetchedWindows>
}

/** A fresh set over sorted files; prefix sums for content mode. */
export function makeSet (mode: SearchMode, files: FileEntry[], fields: Pick<ResultSet, 'lowerBound' | 'notices' | 'complete' | 'skipped' | 'unreadable'>): ResultSet {
  const set: ResultSet = { mode, files, prefix: [], total: 0, lineCount: 0, dropped: { moved: 0, hardLinked: 0 }, ...fields }
  recount(set)
  return set
}

/** One set over the sets of several roots, in root order: their files, notices and skips together, fetched by their own runs. */
export function mergeSets (sets: ResultSet[]): ResultSet {
  const sum = (count: (s: ResultSet) => number): number => sets.reduce((n, s) => n + count(s), 0)
  const merged = makeSet(sets[0].mode, sets.flatMap(s => s.files), {
    lowerBound: sets.some(s => s.lowerBound),
    notices: [...new Set(sets.flatMap(s => s.notices))],
    complete: sets.every(s => s.complete),
    skipped: { binary: sum(s => s.skipped.binary), tooLarge: sum(s => s.skipped.tooLarge) },
    unreadable: sum(s => s.unreadable)
  })
  const hidden = sets.flatMap(s => s.hidden === undefined ? [] : [s.hidden])
  if (hidden.length > 0) merged.hidden = { ...hidden[0], files: hidden.reduce((n, h) => n + h.files, 0), lowerBound: hidden.some(h => h.lowerBound) }
  merged.fetch = async (wants, signal) => {
    const out: FetchedWindows = { windows: new Map() }
    for (const s of sets) {
      const mine = new Set(s.files)
      const wanted = wants.filter(w => mine.has(w.entry))
      // Every set of a content search has a fetch.
      if (wanted.length === 0) continue
      const got = await (s.fetch as NonNullable<ResultSet['fetch']>)(wanted, signal)
      for (const [entry, window] of got.windows) out.windows.set(entry, window)
      out.cut ??= got.cut
    }
    return out
  }
  return merged
}

/** Recomputes totals after the file list changed. */
export function recount (set: ResultSet): void {
  if (set.mode === 'content') {
    const prefix = [0]
    for (const f of set.files) prefix.push(prefix[prefix.length - 1] + f.count)
    set.prefix = prefix
    set.total = prefix[prefix.length - 1]
    set.lineCount = set.total
  } else {
    set.total = set.files.length
    set.lineCount = set.mode === 'count' ? set.files.reduce((n, f) => n + f.count, 0) : 0
  }
}

/** Takes files out of a set (a re-check failed for them), counting why. */
export function dropFiles (set: ResultSet, verdicts: Map<string, keyof Dropped>): void {
  set.files = set.files.filter(f => verdicts.get(f.path) === undefined)
  for (const why of verdicts.values()) set.dropped[why]++
  recount(set)
}

const plural = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`

/** The notices of a set: its own (partial, unreadable…), then the skipped and dropped files, counted. */
export function noticesOf (set: ResultSet): string[] {
  const out = [...set.notices]
  const { binary, tooLarge } = set.skipped
  if (binary > 0) out.push(`${plural(binary, 'file')} with binary data skipped (or searched only up to its first NUL byte)`)
  if (tooLarge > 0) out.push(`${plural(tooLarge, 'file')} over the size cap skipped — name a file in path to search it (up to 100 MB)`)
  if (set.dropped.moved > 0) out.push(`${plural(set.dropped.moved, 'file')} dropped from the results: no longer inside the workspace where it was found (moved, removed or replaced by a link)`)
  if (set.dropped.hardLinked > 0) out.push(`${plural(set.dropped.hardLinked, 'hard-linked file')} dropped from the results (more than one hard link: one may be outside the workspace)`)
  return out
}

/** Approximate bytes one held line takes (its text as UTF-16, and the object). */
export const lineWeight = (l: SearchLine): number => l.text.length * 2 + 64

/** Approximate bytes a set holds (the cache's weight): its file names and counts. */
export function weightOf (set: ResultSet): number {
  let w = 1024
  for (const f of set.files) w += f.path.length * 2 + 64
  return w
}
