import type { Stats } from 'node:fs'
import type { FileHandle } from 'node:fs/promises'
import type { ToolError } from '../../base/errors.js'
import type { Logger } from '../../base/logger.js'
import type { FileSniff, LineWindow, WindowRequest } from './file-lines.js'
import type { IgnoreMatch } from './ignore-rules.js'
import type { Limiter } from '../limiter.js'
import type { PdfReader } from './pdf-text.js'
import type { DirEntry, EntryKind, EntryStats, FsOps, LinkTarget } from './entry-types.js'
import type { WalkOptions, WalkResult, WalkThreads } from './walk-types.js'

/** A path argument after resolution: inside the root, symlinks resolved. */
export interface ResolvedPath {
  /** POSIX path relative to the root ('.' for the root), of the real (symlink-free) location; odd bytes as `\xHH`. */
  relative: string
  /** What to hand to node:fs for this path: a string, or a Buffer when a name is not valid UTF-8. */
  fsPath: string | Buffer
  /** The path as the caller named it, relative to the root (before symlinks were resolved), safe to print. */
  requested: string
  /** What the display paths of its children start with: '' for the root, `src/` below it, `docs:` for root docs of several. */
  base: string
}

/** A served root: its name (the `name:` prefix of its paths when several are served) and real absolute path. */
export interface WorkspaceRoot {
  name: string
  path: string
}

/** The piece of a resolved path inside one root, with that root's own jail (see WorkspaceService.parts). */
export interface WorkspacePart {
  workspace: WorkspaceService
  resolved: ResolvedPath
  /** The path relative to its root, without a root prefix ('.' for the root itself). */
  path: string
}

/**
 * A path looked at without following its last component (get_file_info), described from descriptors only: a file
 * or folder by the fstat of the descriptor opened on it, anything else by its lstat in a folder already open.
 */
export interface InspectedPath {
  /** Display path relative to the root, as named (not resolved). */
  relative: string
  fsPath: string | Buffer
  stats: Stats
  kind: EntryKind
  /** Set when the path itself is a symbolic link. */
  link?: LinkTarget
  /** A regular file's open descriptor (the one `stats` came from) when its content may be served: the caller closes it. */
  handle?: FileHandle
  /** A folder's entry count, from the same descriptor. */
  entries?: number
  /** Why a file's content or a folder's listing is not served. */
  refused?: 'PERMISSION_DENIED' | 'HARD_LINK_REFUSED'
}

/** An open, verified handle on a file or folder inside the root, for a child process (ripgrep). */
export interface PinnedPath {
  /** `/proc/<pid>/fd/<n>` on Linux: names exactly the opened inode, whatever happens to the path since. */
  procPath: string
  isDirectory: boolean
  close(): Promise<void>
}

/** Options of resolve. */
export interface ResolveOptions {
  /** Argument name shown in errors, e.g. `files[0].path`. Default `path`. */
  field?: string
  /** Default true: a missing path is PATH_NOT_FOUND (with in-root suggestions). */
  mustExist?: boolean
  /** The call's signal: bounds the did-you-mean scan. */
  signal?: AbortSignal
}

/** The workspace root jail: every byte of the workspace is reached through these methods. */
export interface WorkspaceService {
  /** Canonical (realpath) absolute root: the first one when several are served. */
  readonly root: string
  /** Every served root, in order; paths carry a `name:` prefix when there is more than one. */
  readonly roots: readonly WorkspaceRoot[]
  /**
   * Parses the agent's spelling (`\xHH` escapes) → lexical containment (PATH_OUTSIDE_ROOT, before any disk access)
   * → component-by-component resolution that judges every link's text before following it (SYMLINK_ESCAPES_ROOT,
   * nothing outside is touched) → PATH_NOT_FOUND with in-root suggestions. Throws toolError(...).
   */
  resolve(path: string, options?: ResolveOptions): Promise<ResolvedPath>
  /**
   * The parse and lexical-containment steps of resolve alone, touching nothing on disk: for names that need
   * not exist now (a file's history). `relative` is the display form ('.' for the root), `bytes` the name.
   */
  lexical(path: string, field?: string): { relative: string, bytes: Buffer, root: string }
  /** The roots a resolved path covers: itself in its root, or, for the top of several roots ('.'), each root. */
  parts(resolved: ResolvedPath): WorkspacePart[]
  /** Opens a regular file no-follow and checks the open descriptor is inside the root; refuses hard links unless allowed. */
  openFile(path: ResolvedPath, field?: string): Promise<FileHandle>
  /** Opens a resolved file or folder for a child process (see PinnedPath). */
  pin(path: ResolvedPath, field?: string): Promise<PinnedPath>
  /** Text of a workspace file by relative path (ignore files, templates, overlays), or undefined if absent/unusable. */
  readText(relative: string, maxBytes?: number): Promise<string | undefined>
  /** .gitignore/.ignore aware, nested rule files honoured, `.git/` always ignored. */
  isIgnored(relative: string, isDirectory: boolean): Promise<boolean>
  /** The verdict for a child of a directory already known not to be ignored (cheaper, for walks). */
  isIgnoredEntry(parentRelative: string, name: string, isDirectory: boolean): Promise<boolean>
  /** The rule that hides a path (`.gitignore:12` and its text), or undefined when it is not ignored. */
  explainIgnored(relative: string, isDirectory: boolean): Promise<IgnoreMatch | undefined>
  /** Lists one directory (opened no-follow and verified) by raw names, kinds from the dirent; links are not followed. */
  readDirectory(dir: { relative: string, fsPath: string | Buffer }): Promise<DirEntry[]>
  /** Tells where a symbolic link (a listed entry: its display path and fs path) points, reading only inside its root. */
  linkTarget(link: { relative: string, fsPath: string | Buffer }): Promise<LinkTarget>
  /**
   * Resolves a path without following its last component and describes what is there from descriptors the jail
   * holds (see InspectedPath): a folder swapped for a link meanwhile can only make it describe something inside.
   */
  inspect(path: string, field?: string, signal?: AbortSignal): Promise<InspectedPath>
  /** lstat of a resolved path; fs errors become tool errors. */
  stat(path: ResolvedPath, field?: string): Promise<Stats>
  /** Walks a directory (links shown, never followed; unreadable entries noted; bounded). */
  walk(options: WalkOptions): Promise<WalkResult>
  /** Binary check and text encoding from the first 8 KiB of an open file. */
  sniff(handle: FileHandle): Promise<FileSniff>
  /** A window of lines of an open file. */
  readLines(handle: FileHandle, size: number, sniff: FileSniff, request: WindowRequest): Promise<LineWindow>
  /** Lines in an open file, by a streaming scan. */
  countLines(handle: FileHandle, size: number, signal?: AbortSignal, encoding?: FileSniff['encoding']): Promise<number>
  /** PDF text extraction (a worker thread; unavailable without pdfjs-dist). */
  readonly pdf: PdfReader
  /** Size and mtime of listed entries (of links themselves); size -1 for one that could not be read. */
  entryStats(entries: readonly DirEntry[]): Promise<EntryStats[]>
  /** Maps an fs error to the tool error for `shown` (EACCES → PERMISSION_DENIED …); rethrows the unknown. */
  fsError(err: unknown, shown: string, field?: string): ToolError
}

/** Options of createWorkspace. */
export interface WorkspaceOptions {
  root: string
  log: Logger
  /** Serve regular files that have more than one hard link (one of them may be outside the root). Default false. */
  allowHardLinks?: boolean
  /** Bounds walks and large reads process-wide (default: a limiter of its own). */
  limiter?: Limiter
  /** The PDF reader (default: one of its own, started on the first PDF). */
  pdf?: PdfReader
  /** The root's name. Default: the folder's base name. */
  name?: string
  /** Several roots are served: every display path of this root starts with `name:`. Default false. */
  prefixed?: boolean
  /** The calls that list folders and read rule files (default: the promise ones). */
  listing?: FsOps
  /**
   * Where walks of more than one level run (default: threads shared by every workspace of the process). Only
   * a walk given as data goes there; on a platform without /proc, or when the threads fail, a walk runs here.
   */
  walks?: WalkThreads
  /** This workspace serves a walk thread: its walks run here, descriptor-relative (folder-walk.ts), with synchronous calls. */
  walkHere?: boolean
}
