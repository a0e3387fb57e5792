import type { Dirent, Stats } from 'node:fs'

// The types of one folder entry and of the calls that read them, in a leaf: the jail, the walks and the service's
// own types all build on these, and none of them is imported back.

/** Kind of a directory entry, from its own lstat (links are never followed). */
export type EntryKind = 'file' | 'dir' | 'symlink' | 'fifo' | 'socket' | 'device' | 'other'

/** One entry of a directory read by readDirectory. */
export interface DirEntry {
  /** Display name (`\xHH` for bytes that are not UTF-8 and for control characters). */
  name: string
  /** Display path relative to the root. */
  relative: string
  fsPath: string | Buffer
  kind: EntryKind
}

/** Where a symbolic link points, told without revealing anything outside the root. */
export type LinkTarget =
  | { state: 'inside', relative: string, kind: EntryKind }
  | { state: 'outside' | 'broken' | 'loop' | 'unreadable' }

/** An open file or folder, as the jail's checks and a rule-file read use it (a FileHandle is one). */
export interface Handle {
  readonly fd: number
  stat(): Promise<Stats>
  read(buffer: Buffer, offset: number, length: number, position: number): Promise<{ bytesRead: number }>
  close(): Promise<void>
}

/**
 * The file-system calls that list folders and read their rule files. The promise ones serve requests; the
 * synchronous ones (a third of the cost per call) serve a thread of its own whose walk blocks nothing but itself.
 * Both run the very same jail code above them.
 */
export interface FsOps<H extends Handle = Handle> {
  lstat(path: string | Buffer): Promise<Stats>
  /** lstat of each path, in order; undefined for one that failed. */
  lstatEach(paths: ReadonlyArray<string | Buffer>): Promise<Array<Stats | undefined>>
  open(path: string | Buffer, flags: number): Promise<H>
  readlinkBytes(path: string | Buffer): Promise<Buffer>
  readdirNames(path: string | Buffer): Promise<Dirent[]>
  readdirBytes(path: string | Buffer): Promise<Array<Dirent<Buffer>>>
}

/** Size and mtime of one listed entry (of a link itself); size -1 when it could not be read. */
export interface EntryStats { size: number, mtimeMs: number }
