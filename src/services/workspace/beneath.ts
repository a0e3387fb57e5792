import type { Stats } from 'node:fs'
import { lstat, readlink } from 'node:fs/promises'
import path from 'node:path'
import { byteString, fsPathOf } from './path-names.js'

/** Most symbolic links followed while resolving one path (Linux's own limit). */
const MAX_LINKS = 40

/** Where a path's components lead when walked beneath the root. */
export type Walked =
  /**
   * Every component exists; `real` is the symlink-free byte string, `stats` the lstat of the last one. `last`: the
   * last component's name in the folder the cursor stands in, unless the walk ended standing in a folder (the
   * root, or after `..`).
   */
  | { state: 'found', real: string, stats: Stats, last?: string }
  /** A component does not exist: `real` is the deepest existing folder, `rest` what is left, `viaLink` if a link led here. */
  | { state: 'missing', real: string, rest: string[], viaLink: boolean }
  /** The path leaves the root: decided from the text of links alone, nothing outside is touched. */
  | { state: 'escapes' }
  /** An fs error on a component inside the root (ENOTDIR, EACCES, ELOOP …). */
  | { state: 'error', code: string }

// fs calls reject with an errno error, which always carries its code.
const errCode = (err: unknown): string => String((err as NodeJS.ErrnoException).code)

/** Containment on path.relative output (never a string prefix: CVE-2025-53110). */
export function isOutside (rel: string): boolean {
  return rel === '..' || rel.startsWith('../') || path.isAbsolute(rel)
}

/**
 * How a walk reaches the names of the folder it stands in: by path from the root (pathCursor), or relative to
 * descriptors of the folders it has entered (pinned-cursor.ts), which a folder swapped for a link cannot move.
 */
export interface Cursor {
  /** lstat of `name` (a byte string) in the folder the walk stands in. */
  lstat(name: string): Promise<Stats>
  /** The text of the link `name` in that folder. */
  readlink(name: string): Promise<Buffer>
  /** Steps into `name`, just lstat'd as a folder (a pinned cursor opens it: it may have changed since). */
  enter(name: string): Promise<void>
  /** Steps back out of the last folder entered (`..`). */
  leave(): Promise<void>
  /** Steps back to the root (a link to an absolute path inside it). */
  toRoot(): Promise<void>
  /** lstat of the folder it stands in. */
  here(): Promise<Stats>
}

/** The cursor that names everything by its path from the root (each call resolves that path afresh). */
export function pathCursor (rootBytes: string): Cursor {
  const stack: string[] = []
  const dir = (): string => stack.length === 0 ? rootBytes : path.join(rootBytes, ...stack)
  return {
    lstat: async (name) => await lstat(fsPathOf(path.join(dir(), name))),
    readlink: async (name) => await readlink(fsPathOf(path.join(dir(), name)), { encoding: 'buffer' }),
    enter: async (name) => { stack.push(name) },
    leave: async () => { stack.pop() },
    toRoot: async () => { stack.length = 0 },
    here: async () => await lstat(fsPathOf(dir()))
  }
}

/**
 * Resolves `components` (byte strings, already lexically inside) one at a time from the real root, the way
 * the kernel would, but reading each symbolic link's text and judging it before following it: a link whose
 * target leaves the root is an escape without the target ever being looked at. So no fs call is made on a
 * path outside the root — nothing outside can be probed, not even for existence. With a pinned cursor that
 * holds even while folders on the way are swapped for links: each name is looked up in a folder already open.
 */
export async function walkBeneath (rootBytes: string, components: string[], followLast: boolean, cursor: Cursor = pathCursor(rootBytes)): Promise<Walked> {
  const stack: string[] = []
  let queue = components.filter(c => c !== '' && c !== '.')
  let links = 0
  let viaLink = false
  let stats: Stats | undefined
  let last: string | undefined
  const here = (): string => stack.length === 0 ? rootBytes : path.join(rootBytes, ...stack)
  while (queue.length > 0) {
    const name = queue.shift() as string
    if (name === '' || name === '.') continue
    if (name === '..') {
      if (stack.length === 0) return { state: 'escapes' }
      stack.pop()
      await cursor.leave()
      stats = undefined
      continue
    }
    let st: Stats
    try {
      st = await cursor.lstat(name)
    } catch (err) {
      const code = errCode(err)
      if (code === 'ENOENT') return { state: 'missing', real: here(), rest: [name, ...queue], viaLink }
      return { state: 'error', code }
    }
    if (st.isSymbolicLink() && (queue.length > 0 || followLast)) {
      if (++links > MAX_LINKS) return { state: 'error', code: 'ELOOP' }
      let target: string
      try {
        target = byteString(await cursor.readlink(name))
      } catch (err) {
        return { state: 'error', code: errCode(err) }
      }
      viaLink = true
      if (path.isAbsolute(target)) {
        const rel = path.relative(rootBytes, path.resolve(target))
        if (isOutside(rel)) return { state: 'escapes' }
        stack.length = 0
        await cursor.toRoot()
        queue = [...rel.split('/'), ...queue]
      } else {
        queue = [...target.split('/'), ...queue]
      }
      stats = undefined
      continue
    }
    if (queue.length === 0) {
      // The last name: looked at, never entered (it need not be a folder).
      last = name
    } else {
      // A name with more below it must be a folder (what the next lookup through it would answer).
      if (!st.isDirectory()) return { state: 'error', code: 'ENOTDIR' }
      try {
        await cursor.enter(name)
      } catch (err) {
        const code = errCode(err)
        if (code === 'ENOENT') return { state: 'missing', real: here(), rest: [name, ...queue], viaLink }
        // Not a folder any more (a link now: ENOTDIR with O_DIRECTORY, ELOOP without): changed while being resolved.
        return { state: 'error', code: code === 'ELOOP' || code === 'ENOTDIR' ? 'EINVAL' : code }
      }
    }
    stack.push(name)
    stats = st
  }
  // A walk that ends standing in a folder (`..`, a link's target) describes that folder.
  if (stats === undefined) return { state: 'found', real: here(), stats: await cursor.here() }
  return { state: 'found', real: here(), stats, last }
}
