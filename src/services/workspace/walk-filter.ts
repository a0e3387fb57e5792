import picomatch from 'picomatch'
import { toolError } from '../../errors.js'
import { compareText } from '../compare-text.js'
import type { DirEntry } from './types.js'
import type { WalkEntry, WalkOptions } from './walk.js'

/** Most globs per list. */
const MAX_GLOBS = 20
// eslint-disable-next-line no-control-regex -- rejecting control characters is the point
const CONTROL = /[\u0000-\u001f\u007f]/

/** A glob matcher over one path. */
export type Matcher = (path: string) => boolean

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

/** Compiles globs (picomatch); a glob without `/` matches the base name at any depth. Refuses bad ones as `field[i]`. */
export function compileGlobs (globs: string[], field: string): Matcher {
  if (globs.length > MAX_GLOBS) {
    throw toolError('TOO_MANY_ITEMS', `${field}: ${globs.length} globs given, at most ${MAX_GLOBS} per call`, 'split them over two calls')
  }
  const matchers = globs.map((glob, i) => {
    const problem = glob.trim() === ''
      ? 'is empty'
      : CONTROL.test(glob)
        ? 'contains a control character'
        : glob.startsWith('/') || /(^|\/)\.\.(\/|$)/.test(glob) ? 'must be relative to path, without ".." or a leading "/"' : undefined
    if (problem !== undefined) throw toolError('INVALID_GLOB', `${field}[${i}] ${JSON.stringify(glob)} ${problem}`, 'use a relative glob such as "**/*.ts" or "*.test.ts"')
    try {
      return picomatch(glob, { dot: true, strictBrackets: true, basename: !glob.includes('/') })
    } catch (err) {
      throw toolError('INVALID_GLOB', `${field}[${i}] ${JSON.stringify(glob)}: ${(err as Error).message}`, 'escape literal brackets or braces with a backslash, e.g. "\\\\[id\\\\].ts"')
    }
  })
  return (path) => matchers.some(m => m(path))
}

/** The entry order of a sort key: folders first, then the key, then the name. */
function orderOf (sort: WalkSort): (a: WalkEntry, b: WalkEntry) => number {
  return (a, b) => {
    const dirs = Number(b.kind === 'dir') - Number(a.kind === 'dir')
    if (dirs !== 0) return dirs
    if (sort === 'mtime' && a.mtimeMs !== b.mtimeMs) return b.mtimeMs - a.mtimeMs
    if (sort === 'size' && a.size !== b.size) return b.size - a.size
    return compareText(a.name, b.name)
  }
}

/** The walk options with their data forms (`match`, `sort`) turned into the functions a walk calls. */
export function withFilters (opts: WalkOptions): WalkOptions {
  const out = { ...opts }
  if (opts.sort !== undefined) out.order = orderOf(opts.sort)
  if (opts.match !== undefined) {
    const { patterns, exclude, base, overRoots } = opts.match
    const matches = compileGlobs(patterns, 'patterns')
    const excluded = exclude.length > 0 ? compileGlobs(exclude, 'exclude') : () => false
    // Every walked entry's path starts with the folder's own (the walk builds it that way).
    const local = (relative: string): string => relative.slice(overRoots ? relative.indexOf(':') + 1 : base.length)
    const either = (m: Matcher, relative: string): boolean => m(local(relative)) || m(relative)
    out.keepDir = (relative) => !either(excluded, relative)
    out.keepEntry = (entry: DirEntry) => either(matches, entry.relative) && !either(excluded, entry.relative)
  }
  return out
}
