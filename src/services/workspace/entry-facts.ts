import { constants as fsc, type Stats } from 'node:fs'
import type { FileHandle } from 'node:fs/promises'
import { kindOf } from './fs-ops.js'
import type { EntryKind, FsOps } from './entry-types.js'

/** An entry opened to be described: read-only, never through a link, never waiting on a FIFO. */
export const DESCRIBE_FLAGS = fsc.O_RDONLY | fsc.O_NOFOLLOW | fsc.O_NONBLOCK

/** What describing an entry found gives: its stats and kind, and what its content facts are read from. */
export interface EntryFacts {
  stats: Stats
  kind: EntryKind
  /** A regular file's descriptor, the one `stats` came from, when its content may be served: the caller closes it. */
  handle?: FileHandle
  /** A folder's entry count, from the listing of the descriptor `stats` came from. */
  entries?: number
  /** Why a file's content or a folder's listing is not served. */
  refused?: 'PERMISSION_DENIED' | 'HARD_LINK_REFUSED'
}

/** How the jail opens the entry a walk found, and lists it. */
export interface EntryAccess {
  /** Opens the entry (it may have changed since it was looked at); undefined when this server may not read it. */
  open(): Promise<FileHandle | undefined>
  /** Where a folder opened as `handle` is listed. */
  listPath(handle: FileHandle): string | Buffer
  listing: Pick<FsOps, 'readdirNames'>
  allowHardLinks: boolean
}

/**
 * The facts of an entry a walk found. `looked` is its lstat as the walk saw it; a file or folder is then opened and
 * described by the fstat of that descriptor (and a folder by its listing), never by a second lookup by path, so a
 * swap after the walk can only make it describe what it opened. Links and special files are not opened.
 */
export async function entryFacts (looked: Stats, access: EntryAccess): Promise<EntryFacts> {
  const kind = kindOf(looked)
  if (kind !== 'file' && kind !== 'dir') return { stats: looked, kind }
  const handle = await access.open()
  // Refused by permissions: only what the walk saw of it (from a folder already inside).
  if (handle === undefined) return { stats: looked, kind, refused: 'PERMISSION_DENIED' }
  let kept = false
  try {
    const stats = await handle.stat()
    const now = kindOf(stats)
    if (now === 'file') {
      if (stats.nlink > 1 && !access.allowHardLinks) return { stats, kind: now, refused: 'HARD_LINK_REFUSED' }
      kept = true
      return { stats, kind: now, handle }
    }
    // Opened read-only, so listable: the same permission.
    if (now === 'dir') return { stats, kind: now, entries: (await access.listing.readdirNames(access.listPath(handle))).length }
    // A FIFO, socket or device that took its place since the walk looked: described, never read.
    return { stats, kind: now }
  } finally {
    if (!kept) await handle.close()
  }
}
