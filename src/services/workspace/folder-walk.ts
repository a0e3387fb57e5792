import fs from 'node:fs'
import { decide, IGNORE_FILES, levelBelow, parseRules, type IgnoreRules, type RuleLevel, type RuleText } from './ignore-rules.js'
import { at, fdPath, heldName, holds, joinName, listFolder, nameOf, openFolder, readRuleAt, type Listing } from './folder-fs.js'
import { kindOf } from './fs-ops.js'
import { displayName, displayText } from './path-names.js'
import { emitFrames } from './walk-frames.js'
import { withFilters } from './walk-filter.js'
import { asBuffer } from './walk-thread.js'
import { errText } from './fs-errors.js'
import type { FolderFrame, Frame, Skipped, UnitFolder, WalkEntry, WalkOptions, WalkResult, WalkUnit } from './walk-types.js'
import type { LinkTarget } from './entry-types.js'

/** What the walk needs from the workspace it runs for. */
export interface FolderWalkHost {
  /** True when a real absolute byte-string path is inside the root. */
  inside(realBytes: string): boolean
  /** What the display paths of a folder's children start with. */
  childBase(relative: string): string
  /** A display path in root-relative form (the rules are kept by it). */
  own(relative: string): string
  rules: IgnoreRules
  /** Text of a rule file that is itself a link, read the careful way (it may point anywhere inside). */
  readLinkedRule(relative: string): Promise<string | undefined>
  linkTarget(link: { relative: string, fsPath: string | Buffer }): Promise<LinkTarget>
}

/** A folder the walk holds open: its descriptor is where its children are looked up. */
interface Held {
  fd: number
  name: string
  relative: string
  fsPath: string | Buffer
  /** The rule sets that apply to its entries; without its own rules until it is listed, unless `own` is set. */
  levels: readonly RuleLevel[]
  own: boolean
}

/** How far a reading got: entries read (the walk's cap bounds them) and whether it stopped. */
interface Reading { count: number, halted: boolean }

/**
 * Walks a folder the way walkTree does — same options, same result, pre-order — but descriptor-relative and
 * with synchronous calls, for a thread that serves no requests: each folder is opened *inside the folder the
 * walk holds open* (`/proc/self/fd/P/name`, no-follow, as a folder) and checked by its descriptor's real path,
 * its entries are listed and their metadata and rule files read through that same descriptor. So a folder or
 * any folder above it swapped for a link while the walk runs is never followed, nothing outside the root is
 * looked up, and an outside path's existence changes nothing. Linux only (it needs /proc/self/fd).
 *
 * The folders are read into frames (walk-frames.ts) and the answer put together from them. With `part`, one part
 * of a walk split over the walk threads is read instead and its frames answered in `pieces` (walk-thread.ts).
 */
export async function walkFolders (host: FolderWalkHost, options: WalkOptions): Promise<WalkResult> {
  const opts = withFilters(options)
  const result: WalkResult = { entries: [], notes: [], truncated: false, skippedHidden: 0, skippedIgnored: 0, skippedIgnoredDirs: 0 }
  const skipDirStats = opts.statDirs === false
  const part = opts.part
  /** In the top part, the units met so far: folders two levels down, read apart. */
  const units: WalkUnit[] = []

  /** The rules that apply to a child folder's entries before its own are read: each level one folder deeper. */
  const inherit = (levels: readonly RuleLevel[], name: string): RuleLevel[] => levels.map(l => levelBelow(l, name))

  /** The levels of a folder's entries: its parent's carried down, then its own rule files (those `present`). */
  async function ownRules (folder: Held, present: (file: string) => boolean): Promise<readonly RuleLevel[]> {
    const files: RuleText[] = []
    const own = host.own(folder.relative)
    for (const file of IGNORE_FILES) {
      if (!present(file)) continue
      const text = await readRuleAt(folder.fd, file)
      // Never the start folder (its rules come with the levels): `own` is a folder below the root.
      const read = text === 'link' ? await host.readLinkedRule(`${own}/${file}`) : text
      if (read !== undefined) files.push({ file, text: read })
    }
    const rules = parseRules(own, files)
    return rules === null ? folder.levels : [...folder.levels, { rules, dir: own, below: '' }]
  }

  /**
   * A folder's children as the walk shows them: one pass over its listing, a path built only for what may be
   * kept; links whose targets the walk tells are left in `links` for the caller (the one step that waits).
   */
  function prepare (folder: Held, depth: number, listing: Listing, levels: readonly RuleLevel[]): { children: WalkEntry[], skipped: Skipped, links: WalkEntry[] } {
    const base = host.childBase(folder.relative)
    const skipped: Skipped = { skippedHidden: 0, skippedIgnored: 0, skippedIgnoredDirs: 0 }
    const children: WalkEntry[] = []
    const links: WalkEntry[] = []
    const dirents = 'text' in listing ? listing.text : listing.bytes
    // A name screens a file only where its shown path ends in `/name`: a root shown by its name shows a top-level file as `root:name`, one segment.
    const keepName = base === '' || base.endsWith('/') ? opts.keepName : undefined
    for (const d of dirents) {
      const name = 'text' in listing ? displayText(d.name as string) : displayName(d.name as Buffer)
      if (!opts.includeHidden && name.startsWith('.')) { skipped.skippedHidden++; continue }
      const kind = kindOf(d)
      const isDir = kind === 'dir'
      if (!isDir && keepName !== undefined && !keepName(name)) continue
      const held = 'text' in listing ? d.name as string : heldName(d.name as Buffer)
      const child: WalkEntry = { name, relative: base + name, fsPath: joinName(folder.fsPath, held), kind, depth, size: -1, mtimeMs: 0 }
      if (isDir && opts.keepDir !== undefined && !opts.keepDir(child.relative, depth)) continue
      if (!isDir && opts.keepEntry !== undefined && !opts.keepEntry(child, depth)) continue
      if (opts.respectGitignore && decide(levels, name, isDir) !== undefined) {
        const example = { relative: child.relative, isDirectory: isDir }
        if (isDir) skipped.firstIgnoredDir ??= example
        else skipped.firstIgnoredFile ??= example
        if (!isDir || opts.showIgnoredDirs !== true) {
          skipped.skippedIgnored++
          if (isDir) skipped.skippedIgnoredDirs++
          continue
        }
        child.ignored = true
      }
      if (!(skipDirStats && isDir)) {
        let stats: fs.Stats | undefined
        try {
          stats = fs.lstatSync(at(folder.fd, held), { throwIfNoEntry: false })
        /* c8 ignore next -- a no-follow lstat in a folder the walk holds open fails only without search permission, which binds no root */
        } catch {}
        if (stats !== undefined) {
          child.size = stats.size
          child.mtimeMs = stats.mtimeMs
        }
      }
      if (kind === 'symlink' && opts.resolveLinks === true) links.push(child)
      children.push(child)
    }
    return { children, skipped, links }
  }

  /** Lists the folder open as `fd` only to count its entries (a folder at the depth limit). */
  function count (parent: Held, child: WalkEntry): void {
    let fd: number | undefined
    try {
      fd = openFolder(at(parent.fd, nameOf(child.fsPath)), host.inside)
      child.childCount = fs.readdirSync(fdPath(fd)).length
    } catch (err) {
      child.unreadable = errText(err)
    } finally {
      if (fd !== undefined) fs.closeSync(fd)
    }
  }

  /** Reads a folder and the folders below it that the walk expands, until the cap or a stop. */
  async function read (folder: Held, depth: number, state: Reading): Promise<FolderFrame> {
    const stop = opts.signal?.aborted === true ? String(opts.signal.reason?.name ?? 'aborted') : opts.stopped?.()
    if (stop !== undefined) {
      state.halted = true
      return { stopped: stop }
    }
    let listed
    let inherited: readonly RuleLevel[]
    try {
      const listing = listFolder(folder.fd)
      const levels = opts.respectGitignore && !folder.own && IGNORE_FILES.some(file => holds(listing, file))
        ? await ownRules(folder, file => holds(listing, file))
        : folder.levels
      listed = prepare(folder, depth, listing, levels)
      for (const link of listed.links) link.link = await host.linkTarget(link)
      inherited = levels
    } catch (err) {
      // The folder the caller named must be listable: that is the caller's error, not an empty listing.
      if (depth === 1) throw err
      return { unreadable: errText(err) }
    }
    const { children, skipped } = listed
    if (opts.order !== undefined) children.sort(opts.order)
    const frame = { children, skipped, sub: {} as Record<number, Frame> }
    for (let i = 0; i < children.length && !state.halted; i++) {
      if (state.count >= opts.maxEntries) {
        state.halted = true
        break
      }
      state.count++
      const child = children[i]
      const isFolder = child.kind === 'dir' && child.ignored !== true
      if (isFolder && depth < opts.maxDepth) {
        if (part !== undefined && depth === 2) {
          frame.sub[i] = { unit: units.length }
          units.push({ parent: unitFolder(folder), folder: unitFolder(child) })
          continue
        }
        frame.sub[i] = await readBelow(folder, child, depth + 1, inherited, state)
      } else if (isFolder && opts.countAtLimit === true) {
        count(folder, child)
      }
    }
    return frame
  }

  /** Opens a child folder inside its parent and reads it. */
  async function readBelow (parent: Held, child: { relative: string, fsPath: string | Buffer, name: string }, depth: number, levels: readonly RuleLevel[], state: Reading): Promise<FolderFrame> {
    let fd: number
    try {
      fd = openFolder(at(parent.fd, nameOf(child.fsPath)), host.inside)
    } catch (err) {
      return { unreadable: errText(err) }
    }
    try {
      return await read({ fd, name: child.name, relative: child.relative, fsPath: child.fsPath, levels: inherit(levels, child.name), own: false }, depth, state)
    } finally {
      fs.closeSync(fd)
    }
  }

  const unitFolder = (f: { name: string, relative: string, fsPath: string | Buffer }): UnitFolder =>
    ({ held: nameOf(f.fsPath), name: f.name, relative: f.relative, fsPath: f.fsPath })

  /** Reads the units this thread claims, each below its parent (held open while its units follow one another). */
  async function readUnits (start: Held, all: WalkUnit[], claim: SharedArrayBuffer): Promise<Record<number, FolderFrame>> {
    const frames: Record<number, FolderFrame> = {}
    const claims = new Int32Array(claim)
    const state: Reading = { count: 0, halted: false }
    let parent: { relative: string, held?: Held, failed?: FolderFrame } | undefined
    try {
      while (!state.halted) {
        const k = Atomics.add(claims, 0, 1)
        if (k >= all.length) break
        const { parent: p, folder } = all[k]
        if (parent?.relative !== p.relative) {
          if (parent?.held !== undefined) fs.closeSync(parent.held.fd)
          parent = { relative: p.relative }
          const fsPath = asBuffer(p.fsPath)
          try {
            const fd = openFolder(at(start.fd, asBuffer(p.held)), host.inside)
            parent.held = { fd, name: p.name, relative: p.relative, fsPath, levels: inherit(start.levels, p.name), own: false }
            // Its rule files, as its listing showed them to the top part: whichever of them is there now.
            if (opts.respectGitignore) parent.held.levels = await ownRules(parent.held, () => true)
          } catch (err) {
            parent.failed = { unreadable: errText(err) }
          }
        }
        frames[k] = parent.held === undefined
          ? parent.failed as FolderFrame
          : await readBelow(parent.held, { relative: folder.relative, fsPath: asBuffer(folder.fsPath), name: folder.name }, 3, parent.held.levels, state)
      }
    } finally {
      if (parent?.held !== undefined) fs.closeSync(parent.held.fd)
    }
    return frames
  }

  const fd = openFolder(opts.start.fsPath, host.inside)
  try {
    const levels = opts.respectGitignore ? await host.rules.levelsFor(host.own(opts.start.relative)) : []
    const start: Held = { fd, name: '', relative: opts.start.relative, fsPath: opts.start.fsPath, levels, own: true }
    if (part !== undefined && 'units' in part) {
      result.pieces = { frames: await readUnits(start, part.units, part.claim) }
      return result
    }
    const frame = await read(start, 1, { count: 0, halted: false })
    if (part !== undefined) result.pieces = { frame, units }
    else emitFrames(frame, {}, opts, result)
  } finally {
    fs.closeSync(fd)
  }
  return result
}
