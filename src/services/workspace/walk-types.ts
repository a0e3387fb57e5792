import type { DirEntry, LinkTarget } from './entry-types.js'

// The types of a walk — its options and result, its filters as data, the frames a split walk hands back, the walk
// threads' protocol — in a leaf: walk.ts, its filter, frames and threads import them, and nothing here imports those.

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

/** What one folder adds to a walk's counts and examples: merged when the walk reaches it, so they come in pre-order. */
export type Skipped = Pick<WalkResult, 'skippedHidden' | 'skippedIgnored' | 'skippedIgnoredDirs' | 'firstIgnoredFile' | 'firstIgnoredDir'>

/** A glob matcher over one path. */
export type Matcher = (path: string) => boolean

/** Globs compiled once: whether one matches a path, and whether one may match a path ending in a name. */
export interface GlobList {
  matches: Matcher
  /** False only when no glob can match a path ending in `name` (a walk then builds no path for it). */
  mayMatchName: (name: string) => boolean
}

/** find_files' filter as data (a walk thread takes no functions): files that match `patterns`, nothing that matches `exclude`. */
export interface GlobFilter {
  patterns: string[]
  exclude: string[]
  /** What the walked folder's display paths start with: globs see each path after it (and as a whole). */
  base: string
  /** The walk is over the top of several roots: globs see each path after its root's `name:`. */
  overRoots: boolean
}

/** list_directory's order as data: folders first, then name ascending, or newest / largest first, then name. */
export type WalkSort = 'name' | 'mtime' | 'size'

/**
 * One folder as a walk thread read it: its children as the walk shows them and what it left out, with the folders
 * it read below (by child index); or why it could not be listed; or that the walk stopped there; or, in a walk split
 * over the walk threads, the unit read apart (see WalkUnit). A walk's answer is put together from its frames in
 * pre-order, with its entry cap, by emitFrames — on the thread for a whole walk, on the caller's for a split one.
 */
export type Frame = FolderFrame | { unit: number }

/** A frame of a folder read (not a unit's place). */
export type FolderFrame =
  | { children: WalkEntry[], skipped: Skipped, sub: Record<number, Frame> }
  | { unreadable: string }
  | { stopped: string }

/** A folder as a walk part names it to another thread: its name as its folder holds it, and its display facts. */
export interface UnitFolder {
  held: string | Uint8Array
  name: string
  relative: string
  fsPath: string | Uint8Array
}

/** A folder two levels below the start of a split walk, and its parent: read whole by whichever thread claims it. */
export interface WalkUnit {
  parent: UnitFolder
  folder: UnitFolder
}

/**
 * A part of a walk split over the walk threads: the top (the start folder and its child folders, with a unit in
 * place of each folder below them), or the units, each claimed from the shared counter `claim` by one thread.
 */
export type WalkPart = { top: true } | { units: WalkUnit[], claim: SharedArrayBuffer }

/** What a walk part answers: the top's frame and units, or the frames of the units this thread claimed. */
export interface WalkPieces {
  frame?: Frame
  units?: WalkUnit[]
  frames?: Record<number, FolderFrame>
}

/** A walk as data: the options without the functions a thread cannot take (find_files and list_directory give data). */
export type WalkSpec = Omit<WalkOptions, 'signal' | 'keepDir' | 'keepEntry' | 'order'>

/** One walk for a walk thread: the root it is in and what to walk; `stop` is shared, see `stopReader`. */
export interface WalkRequest {
  root: { path: string, name: string, prefixed: boolean }
  options: WalkSpec
  stop: SharedArrayBuffer
}

/** A walk thread's answer: the walk, or the fs error code of the folder it was to start from. */
export type WalkAnswer = { result: WalkResult } | { failed: string }

/** Walks on threads of their own (see walk-worker.ts). */
export interface WalkThreads {
  /** Runs a walk on the least busy thread; an abort of `signal` stops it at the next folder, with what it walked. */
  run(root: WalkRequest['root'], options: WalkSpec, signal?: AbortSignal): Promise<WalkAnswer>
  /** Ends the threads (a later walk starts them again). */
  close(): Promise<void>
}
