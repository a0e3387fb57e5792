import fs from 'node:fs'
import { decide, IGNORE_FILES, parseRules, type IgnoreRules, type RuleLevel, type RuleText } from './ignore-rules.js'
import { readVerified } from './open-verified.js'
import { kindOf, syncFs } from './fs-ops.js'
import { byteString, displayName, displayText } from './path-names.js'
import { withFilters } from './walk-filter.js'
import { errText, type Skipped, type WalkEntry, type WalkOptions, type WalkResult } from './walk.js'
import type { DirEntry, LinkTarget } from './types.js'

const { O_RDONLY, O_DIRECTORY, O_NOFOLLOW, O_NONBLOCK } = fs.constants
/** A folder is opened as a folder (anything else is ENOTDIR before it is opened) and never through a link (ELOOP). */
const FOLDER = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK
/** A rule file: never through a link, and a FIFO swapped in does not block the open. */
const RULE_FILE = O_RDONLY | O_NOFOLLOW | O_NONBLOCK
/** Largest rule file read (as the workspace's own reader: a bigger one is skipped whole). */
const RULE_FILE_BYTES = 1024 * 1024

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
  relative: string
  fsPath: string | Buffer
  /** The rule sets that apply to its entries; without its own rules until it is listed, unless `own` is set. */
  levels: readonly RuleLevel[]
  own: boolean
}

/** A folder's children as the walk shows them, what it left out, and the rule sets its child folders start from. */
type Listed = { children: WalkEntry[], skipped: Skipped, levels: readonly RuleLevel[] }

/** `/proc/self/fd/N`: the folder open as N, whatever its path is now. */
const fdPath = (fd: number): string => `/proc/self/fd/${fd}`

/** `name` looked up in the very folder open as `fd`: the kernel starts from that descriptor, never from a path. */
function at (fd: number, name: string | Buffer): string | Buffer {
  return typeof name === 'string' ? `${fdPath(fd)}/${name}` : Buffer.concat([Buffer.from(`${fdPath(fd)}/`), name])
}

/** The last component of a walked entry's fs path: its name as the folder holds it. */
function nameOf (fsPath: string | Buffer): string | Buffer {
  return typeof fsPath === 'string' ? fsPath.slice(fsPath.lastIndexOf('/') + 1) : fsPath.subarray(fsPath.lastIndexOf(0x2f) + 1)
}

function joinName (parent: string | Buffer, name: string | Buffer): string | Buffer {
  // A root of '/' is served by no one in earnest; its children are '//name' then, which the kernel reads as '/name'.
  if (typeof parent === 'string' && typeof name === 'string') return `${parent}/${name}`
  return Buffer.concat([typeof parent === 'string' ? Buffer.from(parent) : parent, Buffer.from('/'), typeof name === 'string' ? Buffer.from(name) : name])
}

const errno = (code: string): NodeJS.ErrnoException => Object.assign(new Error(code), { code })

/**
 * Opens a folder no-follow as a folder, then checks the descriptor's real path (`/proc/self/fd/N`) is inside
 * the root: what is listed through it is that folder, wherever its name points by then. A link swapped in is
 * ESCAPED (as readDirectory notes it), a file, FIFO or device ENOTDIR, none of them opened or followed.
 */
function openFolder (path: string | Buffer, host: FolderWalkHost): number {
  let fd: number
  try {
    fd = fs.openSync(path, FOLDER)
  } catch (err) {
    // O_DIRECTORY answers a link with ENOTDIR: the no-follow lstat of the same name tells a link swapped in.
    const code = (err as NodeJS.ErrnoException).code
    if (code === 'ELOOP' || (code === 'ENOTDIR' && fs.lstatSync(path, { throwIfNoEntry: false })?.isSymbolicLink() === true)) throw errno('ESCAPED')
    throw err
  }
  let real: string
  try {
    real = byteString(fs.readlinkSync(fdPath(fd), { encoding: 'buffer' }))
  /* c8 ignore start -- the descriptor was opened a moment ago by this thread: its /proc link is there */
  } catch (err) {
    fs.closeSync(fd)
    throw err
  }
  /* c8 ignore stop */
  if (!host.inside(real)) {
    fs.closeSync(fd)
    throw errno('ESCAPED')
  }
  return fd
}

/** A folder's entries by name, kind from the listing; a folder holding a name that is not UTF-8 is read as bytes. */
function listNames (fd: number, base: string): Array<{ entry: DirEntry, name: string | Buffer }> {
  const dirents = fs.readdirSync(fdPath(fd), { withFileTypes: true })
  if (!dirents.some(d => d.name.includes('\uFFFD'))) {
    return dirents.map(d => {
      const name = displayText(d.name)
      return { entry: { name, relative: base + name, fsPath: '', kind: kindOf(d) }, name: d.name }
    })
  }
  return fs.readdirSync(fdPath(fd), { withFileTypes: true, encoding: 'buffer' }).map(d => {
    const bytes = d.name as unknown as Buffer
    const name = displayName(bytes)
    const text = bytes.toString('utf8')
    return { entry: { name, relative: base + name, fsPath: '', kind: kindOf(d) }, name: Buffer.from(text).equals(bytes) ? text : bytes }
  })
}

/** A rule file of the folder open as `fd`: its text, `link` when it is a link, undefined when absent or not a file. */
async function readRuleAt (fd: number, file: string): Promise<string | undefined | 'link'> {
  let handle
  try {
    handle = await syncFs.open(at(fd, file), RULE_FILE)
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ELOOP' ? 'link' : undefined
  }
  try {
    return (await handle.stat()).isFile() ? await readVerified(handle, RULE_FILE_BYTES) : undefined
  } finally {
    await handle.close()
  }
}

/**
 * Walks a folder the way walkTree does — same options, same result, pre-order — but descriptor-relative and
 * with synchronous calls, for a thread that serves no requests: each folder is opened *inside the folder the
 * walk holds open* (`/proc/self/fd/P/name`, no-follow, as a folder) and checked by its descriptor's real path,
 * its entries are listed and their metadata and rule files read through that same descriptor. So a folder or
 * any folder above it swapped for a link while the walk runs is never followed, nothing outside the root is
 * looked up, and an outside path's existence changes nothing. Linux only (it needs /proc/self/fd).
 */
export async function walkFolders (host: FolderWalkHost, options: WalkOptions): Promise<WalkResult> {
  const opts = withFilters(options)
  const result: WalkResult = { entries: [], notes: [], truncated: false, skippedHidden: 0, skippedIgnored: 0, skippedIgnoredDirs: 0 }
  const skipDirStats = opts.statDirs === false

  /** The rules that apply to a child folder's entries before its own are read: each level one folder deeper. */
  const inherit = (levels: readonly RuleLevel[], name: string): RuleLevel[] => levels.map(l => ({ rules: l.rules, dir: l.dir, below: `${l.below}${name}/` }))

  async function ownRules (folder: Held, names: Set<string | Buffer>): Promise<readonly RuleLevel[]> {
    const files: RuleText[] = []
    const own = host.own(folder.relative)
    for (const file of IGNORE_FILES) {
      if (!names.has(file)) continue
      const text = await readRuleAt(folder.fd, file)
      // Never the start folder (its rules come with the levels): `own` is a folder below the root.
      const read = text === 'link' ? await host.readLinkedRule(`${own}/${file}`) : text
      if (read !== undefined) files.push({ file, text: read })
    }
    const rules = parseRules(own, files)
    return rules === null ? folder.levels : [...folder.levels, { rules, dir: own, below: '' }]
  }

  async function prepare (folder: Held, depth: number): Promise<Listed> {
    const base = host.childBase(folder.relative)
    const listed = listNames(folder.fd, base)
    const levels = opts.respectGitignore && !folder.own ? await ownRules(folder, new Set(listed.map(l => l.name))) : folder.levels
    const skipped: Skipped = { skippedHidden: 0, skippedIgnored: 0, skippedIgnoredDirs: 0 }
    const children: WalkEntry[] = []
    for (const { entry, name } of listed) {
      const isDir = entry.kind === 'dir'
      if (!opts.includeHidden && entry.name.startsWith('.')) { skipped.skippedHidden++; continue }
      entry.fsPath = joinName(folder.fsPath, name)
      if (isDir && opts.keepDir !== undefined && !opts.keepDir(entry.relative, depth)) continue
      if (!isDir && opts.keepEntry !== undefined && !opts.keepEntry(entry, depth)) continue
      let ignored = false
      if (opts.respectGitignore && decide(levels, entry.name, isDir) !== undefined) {
        const example = { relative: entry.relative, isDirectory: isDir }
        if (isDir) skipped.firstIgnoredDir ??= example
        else skipped.firstIgnoredFile ??= example
        if (!isDir || opts.showIgnoredDirs !== true) {
          skipped.skippedIgnored++
          if (isDir) skipped.skippedIgnoredDirs++
          continue
        }
        ignored = true
      }
      const child: WalkEntry = { ...entry, depth, size: -1, mtimeMs: 0 }
      if (ignored) child.ignored = true
      if (!(skipDirStats && isDir)) {
        let stats: fs.Stats | undefined
        try {
          stats = fs.lstatSync(at(folder.fd, name), { throwIfNoEntry: false })
        /* c8 ignore next -- a no-follow lstat in a folder the walk holds open fails only without search permission, which binds no root */
        } catch {}
        if (stats !== undefined) {
          child.size = stats.size
          child.mtimeMs = stats.mtimeMs
        }
      }
      if (child.kind === 'symlink' && opts.resolveLinks === true) child.link = await host.linkTarget(child)
      children.push(child)
    }
    if (opts.order !== undefined) children.sort(opts.order)
    return { children, skipped, levels }
  }

  /** Lists the folder open as `fd` only to count its entries (a folder at the depth limit). */
  function count (parent: Held, child: WalkEntry): void {
    let fd: number | undefined
    try {
      fd = openFolder(at(parent.fd, nameOf(child.fsPath)), host)
      child.childCount = fs.readdirSync(fdPath(fd)).length
    } catch (err) {
      child.unreadable = errText(err)
    } finally {
      if (fd !== undefined) fs.closeSync(fd)
    }
  }

  async function visit (folder: Held, depth: number, self: WalkEntry | undefined): Promise<void> {
    const stop = opts.signal?.aborted === true ? String(opts.signal.reason?.name ?? 'aborted') : opts.stopped?.()
    if (stop !== undefined) {
      if (!result.truncated) result.notes.push(`stopped early (${stop}); results are partial`)
      result.truncated = true
      return
    }
    let listing: Listed
    try {
      listing = await prepare(folder, depth)
    } catch (err) {
      // The folder the caller named must be listable: that is the caller's error, not an empty listing.
      if (depth === 1) throw err
      unreadable(folder.relative, self, err)
      return
    }
    const { children, skipped, levels } = listing
    result.skippedHidden += skipped.skippedHidden
    result.skippedIgnored += skipped.skippedIgnored
    result.skippedIgnoredDirs += skipped.skippedIgnoredDirs
    result.firstIgnoredFile ??= skipped.firstIgnoredFile
    result.firstIgnoredDir ??= skipped.firstIgnoredDir
    for (const child of children) {
      if (result.entries.length >= opts.maxEntries) {
        if (!result.truncated) result.notes.push(`stopped after ${opts.maxEntries} entries; narrow path or patterns for the rest`)
        result.truncated = true
        return
      }
      result.entries.push(child)
      const isFolder = child.kind === 'dir' && child.ignored !== true
      if (isFolder && depth < opts.maxDepth) {
        let fd: number
        try {
          fd = openFolder(at(folder.fd, nameOf(child.fsPath)), host)
        } catch (err) {
          unreadable(child.relative, child, err)
          continue
        }
        try {
          await visit({ fd, relative: child.relative, fsPath: child.fsPath, levels: inherit(levels, child.name), own: false }, depth + 1, child)
        } finally {
          fs.closeSync(fd)
        }
      } else if (isFolder && opts.countAtLimit === true) {
        count(folder, child)
      }
      if (result.truncated) return
    }
  }

  function unreadable (relative: string, self: WalkEntry | undefined, err: unknown): void {
    const why = errText(err)
    result.notes.push(`${relative}/: ${why}; its entries are not listed`)
    if (self !== undefined) self.unreadable = why
  }

  const fd = openFolder(opts.start.fsPath, host)
  try {
    const levels = opts.respectGitignore ? await host.rules.levelsFor(host.own(opts.start.relative)) : []
    await visit({ fd, relative: opts.start.relative, fsPath: opts.start.fsPath, levels, own: true }, 1, undefined)
  } finally {
    fs.closeSync(fd)
  }
  return result
}
