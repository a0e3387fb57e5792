import { toolError } from '../../base/errors.js'
import { compareText } from '../compare-text.js'
import { compileGlob, globMatches, nameMayMatch, type CompiledGlob } from './glob-match.js'
import type { DirEntry } from './entry-types.js'
import type { GlobList, Matcher, WalkEntry, WalkOptions, WalkSort } from './walk-types.js'

/** Most globs per list. */
const MAX_GLOBS = 20
// eslint-disable-next-line no-control-regex -- rejecting control characters is the point
const CONTROL = /[\u0000-\u001f\u007f]/

/** Compiles globs (picomatch); a glob without `/` matches the base name at any depth. Refuses bad ones as `field[i]`. */
export function compileGlobs (globs: string[], field: string): GlobList {
  if (globs.length > MAX_GLOBS) {
    throw toolError('TOO_MANY_ITEMS', `${field}: ${globs.length} globs given, at most ${MAX_GLOBS} per call`, 'split them over two calls')
  }
  const compiled = globs.map((glob, i): CompiledGlob => {
    const problem = glob.trim() === ''
      ? 'is empty'
      : CONTROL.test(glob)
        ? 'contains a control character'
        : glob.startsWith('/') || /(^|\/)\.\.(\/|$)/.test(glob) ? 'must be relative to path, without ".." or a leading "/"' : undefined
    if (problem !== undefined) throw toolError('INVALID_GLOB', `${field}[${i}] ${JSON.stringify(glob)} ${problem}`, 'use a relative glob such as "**/*.ts" or "*.test.ts"')
    try {
      return compileGlob(glob)
    } catch (err) {
      throw toolError('INVALID_GLOB', `${field}[${i}] ${JSON.stringify(glob)}: ${(err as Error).message}`, 'escape literal brackets or braces with a backslash, e.g. "\\\\[id\\\\].ts"')
    }
  })
  return {
    matches: (path) => compiled.some(g => globMatches(g, path)),
    mayMatchName (name) {
      // A loop, not some(): this runs for every file a walk lists.
      for (const g of compiled) if (nameMayMatch(g, name)) return true
      return false
    }
  }
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

/** Walk options ready for a walk: `keepName` screens a file by its name before its path is built (keepEntry decides). */
export type FilteredOptions = WalkOptions & { keepName?: (name: string) => boolean }

/** The walk options with their data forms (`match`, `sort`) turned into the functions a walk calls. */
export function withFilters (opts: WalkOptions): FilteredOptions {
  const out: FilteredOptions = { ...opts }
  if (opts.sort !== undefined) out.order = orderOf(opts.sort)
  if (opts.match !== undefined) {
    const { patterns, exclude, base, overRoots } = opts.match
    const { matches, mayMatchName } = compileGlobs(patterns, 'patterns')
    const excluded = compileGlobs(exclude, 'exclude').matches
    // Every walked entry's path starts with the folder's own (the walk builds it that way).
    const local = (relative: string): string => relative.slice(overRoots ? relative.indexOf(':') + 1 : base.length)
    const either = (m: Matcher, relative: string): boolean => m(local(relative)) || m(relative)
    if (exclude.length > 0) out.keepDir = (relative) => !either(excluded, relative)
    out.keepEntry = (entry: DirEntry) => either(matches, entry.relative) && !either(excluded, entry.relative)
    out.keepName = mayMatchName
  }
  return out
}
