import type { Stats } from 'node:fs'
import { lstat, readlink } from 'node:fs/promises'
import path from 'node:path'
import { byteString, fsPathOf } from './path-names.js'

/** Most symbolic links followed while resolving one path (Linux's own limit). */
const MAX_LINKS = 40

/** Where a path's components lead when walked beneath the root. */
export type Walked =
  /** Every component exists; `real` is the symlink-free byte string, `stats` the lstat of the last one. */
  | { state: 'found', real: string, stats: Stats }
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
 * Resolves `components` (byte strings, already lexically inside) one at a time from the real root, the way
 * the kernel would, but reading each symbolic link's text and judging it before following it: a link whose
 * target leaves the root is an escape without the target ever being looked at. So no fs call is made on a
 * path outside the root — nothing outside can be probed, not even for existence.
 */
export async function walkBeneath (rootBytes: string, components: string[], followLast: boolean): Promise<Walked> {
  const stack: string[] = []
  let queue = components.filter(c => c !== '' && c !== '.')
  let links = 0
  let viaLink = false
  let stats: Stats | undefined
  const here = (): string => stack.length === 0 ? rootBytes : path.join(rootBytes, ...stack)
  while (queue.length > 0) {
    const name = queue.shift() as string
    if (name === '' || name === '.') continue
    if (name === '..') {
      if (stack.length === 0) return { state: 'escapes' }
      stack.pop()
      stats = undefined
      continue
    }
    const candidate = path.join(here(), name)
    let st: Stats
    try {
      st = await lstat(fsPathOf(candidate))
    } catch (err) {
      const code = errCode(err)
      if (code === 'ENOENT') return { state: 'missing', real: here(), rest: [name, ...queue], viaLink }
      return { state: 'error', code }
    }
    if (st.isSymbolicLink() && (queue.length > 0 || followLast)) {
      if (++links > MAX_LINKS) return { state: 'error', code: 'ELOOP' }
      let target: string
      try {
        target = byteString(await readlink(fsPathOf(candidate), { encoding: 'buffer' }))
      } catch (err) {
        return { state: 'error', code: errCode(err) }
      }
      viaLink = true
      if (path.isAbsolute(target)) {
        const rel = path.relative(rootBytes, path.resolve(target))
        if (isOutside(rel)) return { state: 'escapes' }
        stack.length = 0
        queue = [...rel.split('/'), ...queue]
      } else {
        queue = [...target.split('/'), ...queue]
      }
      stats = undefined
      continue
    }
    stack.push(name)
    stats = st
  }
  return { state: 'found', real: here(), stats: stats ?? await lstat(fsPathOf(here())) }
}
