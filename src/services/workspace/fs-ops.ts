import fs, { type Stats } from 'node:fs'
import { lstat, open, readdir, readlink, type FileHandle } from 'node:fs/promises'
import type { EntryKind, EntryStats, FsOps, Handle } from './entry-types.js'

/** Most lstat calls the promise API has in flight for one folder. */
const STAT_CONCURRENCY = 64

/** Node's promise API: what the request path uses. */
export const promiseFs: FsOps<FileHandle> = {
  lstat: async (p) => await lstat(p),
  async lstatEach (paths) {
    // Bounded fan-out: an unbounded Promise.all over a big folder hits EMFILE.
    const out = new Array<Stats | undefined>(paths.length)
    for (let i = 0; i < paths.length; i += STAT_CONCURRENCY) {
      await Promise.all(paths.slice(i, i + STAT_CONCURRENCY).map(async (p, j) => {
        out[i + j] = await lstat(p).catch(() => undefined)
      }))
    }
    return out
  },
  open: async (p, flags) => await open(p, flags),
  readlinkBytes: async (p) => await readlink(p, { encoding: 'buffer' }),
  readdirNames: async (p) => await readdir(p, { withFileTypes: true }),
  readdirBytes: async (p) => await readdir(p, { withFileTypes: true, encoding: 'buffer' })
}

/** A descriptor opened by the synchronous calls. */
class SyncHandle implements Handle {
  constructor (readonly fd: number) {}
  async stat (): Promise<Stats> { return fs.fstatSync(this.fd) }
  async read (buffer: Buffer, offset: number, length: number, position: number): Promise<{ bytesRead: number }> {
    return { bytesRead: fs.readSync(this.fd, buffer, offset, length, position) }
  }

  async close (): Promise<void> { fs.closeSync(this.fd) }
}

/** The synchronous calls behind the same promise-shaped surface: only for a thread that serves no requests. */
export const syncFs: FsOps = {
  lstat: async (p) => fs.lstatSync(p),
  // One loop: a promise per entry was a fifth of a walk's garbage.
  lstatEach: async (paths) => paths.map(p => {
    try {
      return fs.lstatSync(p)
    } catch {
      return undefined
    }
  }),
  open: async (p, flags) => new SyncHandle(fs.openSync(p, flags)),
  readlinkBytes: async (p) => fs.readlinkSync(p, { encoding: 'buffer' }),
  readdirNames: async (p) => fs.readdirSync(p, { withFileTypes: true }),
  readdirBytes: async (p) => fs.readdirSync(p, { withFileTypes: true, encoding: 'buffer' })
}

/** Size and mtime of each entry (of a link itself); size -1 for one that could not be read. */
export async function statEntries (fs: FsOps, entries: ReadonlyArray<{ fsPath: string | Buffer }>): Promise<EntryStats[]> {
  return (await fs.lstatEach(entries.map(e => e.fsPath))).map(s => s === undefined ? { size: -1, mtimeMs: 0 } : { size: s.size, mtimeMs: s.mtimeMs })
}

/** Entry kind of a Stats or Dirent. */
export function kindOf (s: { isFile(): boolean, isDirectory(): boolean, isSymbolicLink(): boolean, isFIFO(): boolean, isSocket(): boolean, isBlockDevice(): boolean, isCharacterDevice(): boolean }): EntryKind {
  if (s.isSymbolicLink()) return 'symlink'
  if (s.isFile()) return 'file'
  if (s.isDirectory()) return 'dir'
  if (s.isFIFO()) return 'fifo'
  if (s.isSocket()) return 'socket'
  if (s.isBlockDevice() || s.isCharacterDevice()) return 'device'
  return 'other'
}
