import type { WorkspaceService } from './types.js'
import type { DirEntry } from './entry-types.js'
import { errText } from './fs-errors.js'
import { withFilters } from './walk-filter.js'
import type { Skipped, WalkEntry, WalkOptions, WalkResult } from './walk-types.js'

/** A folder's metadata when the caller did not ask for it. */
const NOT_READ = { size: -1, mtimeMs: 0 }

/** Folders read ahead of the walk (their entries listed, ignore rules applied, metadata read) while it is elsewhere. */
const READ_AHEAD = 8

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
