import fs from 'node:fs'
import { readVerified } from './open-verified.js'
import { syncFs } from './fs-ops.js'
import { byteString } from './path-names.js'

// The synchronous, descriptor-relative calls of a walk thread's walk (folder-walk.ts): every name is looked up in
// a folder the walk holds open, through /proc/self/fd, never by a path from the root.

const { O_RDONLY, O_DIRECTORY, O_NOFOLLOW, O_NONBLOCK } = fs.constants
/** A folder is opened as a folder (anything else is ENOTDIR before it is opened) and never through a link (ELOOP). */
const FOLDER = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK
/** A rule file: never through a link, and a FIFO swapped in does not block the open. */
const RULE_FILE = O_RDONLY | O_NOFOLLOW | O_NONBLOCK
/** Largest rule file read (as the workspace's own reader: a bigger one is skipped whole). */
const RULE_FILE_BYTES = 1024 * 1024

/** `/proc/self/fd/N`: the folder open as N, whatever its path is now. */
export const fdPath = (fd: number): string => `/proc/self/fd/${fd}`

/** `name` looked up in the very folder open as `fd`: the kernel starts from that descriptor, never from a path. */
export function at (fd: number, name: string | Buffer): string | Buffer {
  return typeof name === 'string' ? `${fdPath(fd)}/${name}` : Buffer.concat([Buffer.from(`${fdPath(fd)}/`), name])
}

/** The last component of a walked entry's fs path: its name as the folder holds it. */
export function nameOf (fsPath: string | Buffer): string | Buffer {
  return typeof fsPath === 'string' ? fsPath.slice(fsPath.lastIndexOf('/') + 1) : fsPath.subarray(fsPath.lastIndexOf(0x2f) + 1)
}

/** A child's fs path: its folder's and its name as the folder holds it. */
export function joinName (parent: string | Buffer, name: string | Buffer): string | Buffer {
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
export function openFolder (path: string | Buffer, inside: (realBytes: string) => boolean): number {
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
  if (!inside(real)) {
    fs.closeSync(fd)
    throw errno('ESCAPED')
  }
  return fd
}

/** A folder's entries as listed: by decoded name, or by bytes when one of them is not UTF-8. */
export type Listing = { text: fs.Dirent[] } | { bytes: Array<fs.Dirent<Buffer>> }

/** Lists the folder open as `fd`; one holding a name that is not UTF-8 is read again as bytes. */
export function listFolder (fd: number): Listing {
  const text = fs.readdirSync(fdPath(fd), { withFileTypes: true })
  for (const d of text) {
    if (d.name.includes('\uFFFD')) return { bytes: fs.readdirSync(fdPath(fd), { withFileTypes: true, encoding: 'buffer' }) as unknown as Array<fs.Dirent<Buffer>> }
  }
  return { text }
}

/** A name listed as bytes, as the folder holds it: text when it is valid UTF-8 (what a text listing gives). */
export function heldName (bytes: Buffer): string | Buffer {
  const text = bytes.toString('utf8')
  return Buffer.from(text).equals(bytes) ? text : bytes
}

/** Whether a listing holds `name` (an ASCII name). */
export function holds (listing: Listing, name: string): boolean {
  return 'text' in listing ? listing.text.some(d => d.name === name) : listing.bytes.some(d => d.name.equals(Buffer.from(name)))
}

/** A rule file of the folder open as `fd`: its text, `link` when it is a link, undefined when absent or not a file. */
export async function readRuleAt (fd: number, file: string): Promise<string | undefined | 'link'> {
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
