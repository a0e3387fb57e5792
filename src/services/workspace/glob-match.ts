import picomatch from 'picomatch'

/** How every glob of ours is compiled: dot-names match, an unclosed bracket is an error. */
const OPTIONS = { dot: true, strictBrackets: true }

/**
 * The tail of a `**∕X` glob that a base name can be screened by: no `/`, no globstar, no bracket, extglob, escape
 * or negation — only literal characters, `*`, `?` and braces, none of which can stand for a `/`.
 */
// eslint-disable-next-line no-control-regex -- a control character is no literal to screen by
const NAME_TAIL = /^(?:[^/\\[\]()!@+|^$"'`*\u0000-\u001f]|\*(?!\*))+$/

/** One glob compiled once (its regex made once, not per path), tested as picomatch's own matcher tests it. */
export interface CompiledGlob {
  glob: string
  re: RegExp
  /** A glob without `/`: its regex is tested on the path's base name (picomatch's `basename`). */
  basename: boolean
  /** A test of the base name alone that every path the glob matches passes; undefined when only the whole path tells. */
  name?: { re: RegExp, literal: string }
}

/** picomatch's base name: the last segment, or the one before a trailing `/`. */
function baseName (path: string): string {
  const cut = path.lastIndexOf('/')
  if (cut === -1 || cut !== path.length - 1) return path.slice(cut + 1)
  const segments = path.split('/')
  return segments[segments.length - 2]
}

/** Compiles a glob (throws picomatch's error for one it refuses). */
export function compileGlob (glob: string): CompiledGlob {
  const basename = !glob.includes('/')
  const re = picomatch.makeRe(glob, { ...OPTIONS, basename })
  if (basename) return { glob, re, basename, name: { re, literal: glob } }
  // `**∕X` matches a path exactly when X matches its last segment (walked paths hold no `.` or `..` segment).
  const tail = glob.startsWith('**/') ? glob.slice(3) : ''
  if (!NAME_TAIL.test(tail)) return { glob, re, basename }
  return { glob, re, basename, name: { re: picomatch.makeRe(tail, OPTIONS), literal: tail } }
}

/** picomatch's matcher over one path, with the glob's regex made once: the glob itself, else its regex. */
export function globMatches (g: CompiledGlob, path: string): boolean {
  if (path === '') return false
  if (path === g.glob) return true
  return g.re.test(g.basename ? baseName(path) : path)
}

/** False only when no path ending in `name` can match the glob: a walk then builds no path for it. */
export function nameMayMatch (g: CompiledGlob, name: string): boolean {
  return g.name === undefined || name === g.name.literal || g.name.re.test(name)
}
