import type { DirEntry, LinkTarget, WorkspaceService } from './workspace.js'
import { errText } from './fs-errors.js'
import { withFilters, type GlobFilter, type WalkSort } from './walk-filter.js'
import type { WalkPart, WalkPieces } from './walk-frames.js'

/** One entry found by a walk. */
export interface WalkEntry extends DirEntry {
  /** 1 for a direct child of the start directory. */
  depth: number
  /** Bytes (of the link itself for links); -1 when lstat failed. */
  size: number
  mtimeMs: number
  /** A directory shown but not expanded because it is ignored. */
  ignored?: boolean
  /** Set for links when the walk resolves link targets. */
  link?: LinkTarget
  /** Entries in a directory left unexpanded at the depth limit (hidden/ignored not filtered). */
  childCount?: number
  /** Why a directory could not be listed (e.g. permission denied). */
  unreadable?: string
}

/** What to walk and how. */
export interface WalkOptions {
  start: { relative: string, fsPath: string | Buffer }
  /** 1 = only the start directory's children. */
  maxDepth: number
  includeHidden: boolean
  respectGitignore: boolean
  /** List ignored directories as one unexpanded entry (list_directory) instead of dropping them (find_files). */
  showIgnoredDirs?: boolean
  /** Count the children of directories at the depth limit. */
  countAtLimit?: boolean
  /** Tell where links point (costs a realpath per link). */
  resolveLinks?: boolean
  /** Stop after this many entries (the result is then marked truncated). */
  maxEntries: number
  /** Return false to neither list nor descend into a directory (exclude globs); `depth` is the folder's own. */
  keepDir?: (relative: string, depth: number) => boolean
  /** Return false to leave out a non-directory entry (only matching files are kept and counted). */
  keepEntry?: (entry: DirEntry, depth: number) => boolean
  /** false: folders' size and mtime are not read (size -1, mtime 0) — a caller that shows only files saves an lstat a folder. */
  statDirs?: boolean
  /** false: folders are walked, and count toward maxEntries, but are left out of `entries` (a caller that shows only files). */
  showDirs?: boolean
  signal?: AbortSignal
  /** Polled at every folder beside `signal` by a walk thread's walk: the name of why to stop, or undefined (see walk-thread.ts). */
  stopped?: () => string | undefined
  /** Sorts siblings; the result is in pre-order, so this fixes the listing order. */
  order?: (a: WalkEntry, b: WalkEntry) => number
  /** keepDir and keepEntry as data, for find_files' globs: a walk given only data can run on the walk threads. */
  match?: GlobFilter
  /** order as data (folders first, then this key): see `match`. */
  sort?: WalkSort
  /** One part of a walk split over the walk threads (walk-thread.ts): its frames come back in `pieces`. */
  part?: WalkPart
}

/** An entry the ignore rules left out, named in a notice. */
export interface IgnoredExample {
  relative: string
  isDirectory: boolean
}

/** A walk's entries plus what it skipped and why. */
export interface WalkResult {
  entries: WalkEntry[]
  /** Per-path notes: unreadable directories, stops. */
  notes: string[]
  truncated: boolean
  /** Entries left out because they are hidden / ignored. */
  skippedHidden: number
  skippedIgnored: number
  /** Of skippedIgnored, the folders (their contents were never walked). */
  skippedIgnoredDirs: number
  /** The first file the ignore rules hid, to name the rule in a notice. */
  firstIgnoredFile?: IgnoredExample
  /** The first folder the ignore rules hid or left unexpanded. */
  firstIgnoredDir?: IgnoredExample
  /** What a part of a split walk read (see WalkOptions.part); its entries come only once the parts are put together. */
  pieces?: WalkPieces
}

/** A folder's metadata when the caller did not ask for it. */
const NOT_READ = { size: -1, mtimeMs: 0 }

/** Folders read ahead of the walk (their entries listed, ignore rules applied, metadata read) while it is elsewhere. */
const READ_AHEAD = 8

/** What one folder adds to a walk's counts and examples: merged when the walk reaches it, so they come in pre-order. */
export type Skipped = Pick<WalkResult, 'skippedHidden' | 'skippedIgnored' | 'skippedIgnoredDirs' | 'firstIgnoredFile' | 'firstIgnoredDir'>

/** Adds what one folder left out to the walk's counts, keeping the first examples. */
export function mergeSkipped (result: WalkResult, skipped: Skipped): void {
  result.skippedHidden += skipped.skippedHidden
  result.skippedIgnored += skipped.skippedIgnored
  result.skippedIgnoredDirs += skipped.skippedIgnoredDirs
  result.firstIgnoredFile ??= skipped.firstIgnoredFile
  result.firstIgnoredDir ??= skipped.firstIgnoredDir
}

/**
 * Takes `child` as the walk's entry number `taken` (listed unless folders are hidden), or, at `maxEntries`, ends the
 * walk with its note: false.
 */
export function admitEntry (result: WalkResult, child: WalkEntry, taken: number, opts: { maxEntries: number, showDirs?: boolean }): boolean {
  if (taken >= opts.maxEntries) {
    if (!result.truncated) result.notes.push(`stopped after ${opts.maxEntries} entries; narrow path or patterns for the rest`)
    result.truncated = true
    return false
  }
  if (opts.showDirs !== false || child.kind !== 'dir') result.entries.push(child)
  return true
}

/** A folder's children as the walk will show them (and what it left out), or why it could not be listed. */
type Prepared = { children: WalkEntry[], skipped: Skipped } | { error: unknown }

/**
 * Walks a directory without following links (so link loops cannot trap it), skipping hidden and
 * ignored entries as asked, noting unreadable directories instead of failing, within fixed bounds.
 * The result is in pre-order whatever the read-ahead: up to READ_AHEAD sibling folders are listed while the
 * walk is inside an earlier one, so their disk waits overlap.
 */
export async function walkTree (ws: WorkspaceService, options: WalkOptions): Promise<WalkResult> {
  const opts = withFilters(options)
  const result: WalkResult = { entries: [], notes: [], truncated: false, skippedHidden: 0, skippedIgnored: 0, skippedIgnoredDirs: 0 }
  /** Entries walked, shown or not (the cap counts them all). */
  let taken = 0

  /** Lists a folder, drops hidden and excluded entries, applies the ignore rules, then reads the rest's metadata. */
  async function prepare (dir: { relative: string, fsPath: string | Buffer }, depth: number): Promise<Prepared> {
    let listed: DirEntry[]
    try {
      listed = await ws.readDirectory(dir)
    } catch (error) {
      return { error }
    }
    const skipped: Skipped = { skippedHidden: 0, skippedIgnored: 0, skippedIgnoredDirs: 0 }
    const kept: Array<DirEntry & { ignored?: boolean }> = []
    for (const entry of listed) {
      if (!opts.includeHidden && entry.name.startsWith('.')) { skipped.skippedHidden++; continue }
      if (entry.kind === 'dir' && opts.keepDir !== undefined && !opts.keepDir(entry.relative, depth)) continue
      if (entry.kind !== 'dir' && opts.keepEntry !== undefined && !opts.keepEntry(entry, depth)) continue
      // The rules first: an entry they hide costs no lstat.
      if (opts.respectGitignore && await ws.isIgnoredEntry(dir.relative, entry.name, entry.kind === 'dir')) {
        const example = { relative: entry.relative, isDirectory: entry.kind === 'dir' }
        if (entry.kind === 'dir') skipped.firstIgnoredDir ??= example
        else skipped.firstIgnoredFile ??= example
        if (entry.kind !== 'dir' || opts.showIgnoredDirs !== true) {
          skipped.skippedIgnored++
          if (entry.kind === 'dir') skipped.skippedIgnoredDirs++
          continue
        }
        kept.push({ ...entry, ignored: true })
        continue
      }
      kept.push(entry)
    }
    const skipDirs = opts.statDirs === false
    // In kept's order, so the entries read are matched back by a running index.
    const stats = await ws.entryStats(skipDirs ? kept.filter(entry => entry.kind !== 'dir') : kept)
    let read = 0
    const children: WalkEntry[] = []
    for (const one of kept) {
      const entry: WalkEntry = { ...one, depth, ...(skipDirs && one.kind === 'dir' ? NOT_READ : stats[read++]) }
      if (entry.kind === 'symlink' && opts.resolveLinks === true) entry.link = await ws.linkTarget(entry)
      children.push(entry)
    }
    if (opts.order !== undefined) children.sort(opts.order)
    return { children, skipped }
  }

  async function visit (dir: { relative: string, fsPath: string | Buffer }, depth: number, self: WalkEntry | undefined, prepared: Promise<Prepared>): Promise<void> {
    if (opts.signal?.aborted === true) {
      if (!result.truncated) result.notes.push(`stopped early (${String(opts.signal.reason?.name ?? 'aborted')}); results are partial`)
      result.truncated = true
      return
    }
    const listing = await prepared
    if ('error' in listing) {
      // The folder the caller named must be listable: that is an error, not an empty listing.
      if (depth === 1) throw ws.fsError(listing.error, dir.relative)
      const why = errText(listing.error)
      result.notes.push(`${dir.relative}/: ${why}; its entries are not listed`)
      if (self !== undefined) self.unreadable = why
      return
    }
    const { children, skipped } = listing
    mergeSkipped(result, skipped)
    const expand = (child: WalkEntry): boolean => child.kind === 'dir' && child.ignored !== true && depth < opts.maxDepth
    // The next folders to expand, each being read while the walk is in the ones before it.
    const ahead = new Map<WalkEntry, Promise<Prepared>>()
    let next = 0
    const readAhead = (): void => {
      while (next < children.length && ahead.size < READ_AHEAD) {
        const child = children[next++]
        if (!expand(child)) continue
        const reading = prepare(child, depth + 1)
        // A folder read ahead that the walk never reaches (it stopped first) must not fail the process: the
        // walk sees a failure itself when it awaits the reading.
        reading.catch(() => undefined)
        ahead.set(child, reading)
      }
    }
    for (const child of children) {
      if (!admitEntry(result, child, taken++, opts)) return
      readAhead()
      if (expand(child)) {
        const reading = ahead.get(child) as Promise<Prepared>
        ahead.delete(child)
        await visit(child, depth + 1, child, reading)
      } else if (child.kind === 'dir' && child.ignored !== true && opts.countAtLimit === true) {
        child.childCount = await ws.readDirectory(child).then(e => e.length, (err: unknown) => { child.unreadable = errText(err); return undefined })
      }
      if (result.truncated) return
    }
  }

  await visit(opts.start, 1, undefined, prepare(opts.start, 1))
  return result
}
