import { constants as fsc, type Stats } from 'node:fs'
import type { FileHandle } from 'node:fs/promises'
import { byteString } from './path-names.js'
import type { FsOps, Handle } from './entry-types.js'

/** An open descriptor whose real location was checked after opening. */
export interface Opened<H extends Handle = FileHandle> {
  handle: H
  /** fstat of the descriptor. */
  stats: Stats
  /** `/proc/<pid>/fd/<n>` when the platform has it: how a child process reaches this very inode. */
  procPath?: string
}

/** How openVerified ended. */
export type OpenResult<H extends Handle = FileHandle> =
  | { ok: true, opened: Opened<H> }
  /** `escaped`: the descriptor is outside the root; `special`: not a file or folder (never opened); `error`: fs error `code`. */
  | { ok: false, reason: 'escaped' | 'special' | 'error', code: string }

/** What the caller knows about the root, to check a descriptor against it. */
export interface Containment {
  /** True when a real absolute byte-string path is inside the root. */
  inside(realBytes: string): boolean
  /** Where /proc is missing: the (dev, ino) a fresh no-follow walk of the path finds now, or undefined. */
  rewalk?(): Promise<{ dev: number, ino: number } | undefined>
}

let procFd: boolean | undefined

// fs calls reject with an errno error, which always carries its code.
const errCode = (err: unknown): string => String((err as NodeJS.ErrnoException).code)

/** What open(2) answers for a socket (ENXIO on Linux) or a device without a driver, instead of opening it. */
const SPECIAL_OPEN_ERRORS = new Set(['ENXIO', 'ENODEV', 'EOPNOTSUPP'])

/**
 * Opens a path without following its last component, then checks where the descriptor really is
 * (`/proc/self/fd/N` on Linux) before a single byte is read: a folder swapped for a link between the
 * caller's check and this open is caught here. FIFOs, sockets and devices are refused before opening.
 */
export async function openVerified<H extends Handle> (fsPath: string | Buffer, within: Containment, fs: FsOps<H>): Promise<OpenResult<H>> {
  let before: Stats
  try {
    before = await fs.lstat(fsPath)
  } catch (err) {
    return { ok: false, reason: 'error', code: errCode(err) }
  }
  if (!before.isFile() && !before.isDirectory() && !before.isSymbolicLink()) return { ok: false, reason: 'special', code: 'ESPECIAL' }
  let handle: H
  try {
    handle = await fs.open(fsPath, fsc.O_RDONLY | fsc.O_NOFOLLOW | fsc.O_NONBLOCK)
  } catch (err) {
    const code = errCode(err)
    if (SPECIAL_OPEN_ERRORS.has(code)) return { ok: false, reason: 'special', code }
    return { ok: false, reason: 'error', code }
  }
  try {
    const stats = await handle.stat()
    let real: string | undefined
    if (procFd !== false) {
      real = await fs.readlinkBytes(`/proc/self/fd/${handle.fd}`).then(byteString, () => undefined)
      procFd = real !== undefined
    }
    let escaped: boolean
    if (real !== undefined) escaped = !within.inside(real)
    else {
      const now = await within.rewalk?.()
      escaped = now === undefined || now.dev !== stats.dev || now.ino !== stats.ino
    }
    if (escaped) {
      await handle.close()
      return { ok: false, reason: 'escaped', code: 'ESCAPED' }
    }
    if (!stats.isFile() && !stats.isDirectory()) {
      await handle.close()
      return { ok: false, reason: 'special', code: 'ESPECIAL' }
    }
    return { ok: true, opened: { handle, stats, procPath: real !== undefined ? `/proc/${process.pid}/fd/${handle.fd}` : undefined } }
  /* c8 ignore start -- fstat of an open descriptor and the containment checks do not throw; if one ever
     did, the descriptor must still not leak */
  } catch (err) {
    await handle.close()
    throw err
  }
  /* c8 ignore stop */
}

/**
 * Reads an open file's text up to `maxBytes`; undefined when it is larger (a partial rule file would be wrong).
 * The buffer starts at the file's size (a walk reads hundreds of small rule files: a buffer of `maxBytes` each was
 * most of its garbage) and grows only if the file grew since.
 */
export async function readVerified (handle: Handle, maxBytes: number): Promise<string | undefined> {
  const { size } = await handle.stat()
  let buf = Buffer.allocUnsafe(Math.min(size, maxBytes) + 1)
  let got = 0
  for (;;) {
    const { bytesRead } = await handle.read(buf, got, buf.length - got, got)
    if (bytesRead === 0) break
    got += bytesRead
    if (got === buf.length) {
      if (got > maxBytes) return undefined
      const grown = Buffer.allocUnsafe(Math.min(buf.length * 2, maxBytes + 1))
      buf.copy(grown, 0, 0, got)
      buf = grown
    }
  }
  return buf.subarray(0, got).toString('utf8')
}
