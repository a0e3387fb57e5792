import path from 'node:path'

/** How a file's references were tied to a definition: it defines the name, it imports (includes) the file that does, or only the name matched. */
export type Via = 'same-file' | 'import' | 'name'

/** A definition as attribution sees it: its real path (and language by extension). */
export interface Defined {
  path: string
}

/** The definitions a file's references mean, and how that was decided. */
export interface Attribution {
  /** Indices into the definitions. */
  meant: number[]
  via: Via
}

const EXTENSION = /\.(d\.ts|[cm]?[jt]sx?|pyi?|rs|go|java|c|h|cc|cpp|cxx|c\+\+|hh|hpp|hxx|h\+\+)$/i
const withoutExtension = (file: string): string => file.replace(EXTENSION, '')
const extensionOf = (file: string): string => path.extname(file).toLowerCase()

/** Where an import's segments name a file: `.../a/b` (or a Python package's `__init__`, a Rust module's `mod`). */
function endsWithSegments (definition: string, segments: readonly string[], tails: readonly string[] = ['']): boolean {
  if (segments.some(s => s === '')) return false
  const stem = withoutExtension(definition)
  return tails.some(tail => stem.endsWith(`/${segments.join('/')}${tail}`))
}

/**
 * Whether an import or include specifier written in `from` reaches the file `definition` (both real paths).
 * By the importing file's language: a relative path resolved from its folder (JS/TS also `index`), a C include
 * also against any folder (`linux/slab.h` is .../linux/slab.h), Python's dotted modules, Rust's `crate::a::b`
 * modules, Go's package folders, Java's `a.b.C`. Heuristic by design: no compiler settings are read.
 */
export function importReaches (spec: string, from: string, definition: string): boolean {
  const target = withoutExtension(definition)
  const ext = extensionOf(from)
  const folder = path.posix.dirname(from)
  const relative = (): boolean => {
    const resolved = withoutExtension(path.posix.resolve(folder, spec))
    return resolved === target || `${resolved}/index` === target
  }
  if ((spec.startsWith('./') || spec.startsWith('../')) && relative()) return true
  switch (ext) {
    case '.py': case '.pyi': {
      const dots = (/^\.*/.exec(spec) as RegExpExecArray)[0].length
      const segments = spec.slice(dots).split('.').filter(s => s !== '')
      if (dots === 0) return endsWithSegments(definition, segments, ['', '/__init__'])
      const base = path.posix.resolve(folder, ...Array<string>(dots - 1).fill('..'))
      const module = path.posix.join(base, ...segments)
      return target === module || target === `${module}/__init__`
    }
    case '.go':
      return spec !== '' && path.posix.dirname(definition).endsWith(`/${spec.split('/').at(-1) as string}`)
    case '.rs': {
      const segments = spec.split('::{')[0].split('::').filter(s => !['crate', 'self', 'super', 'std', 'core'].includes(s))
      for (let n = segments.length; n > 0; n--) if (endsWithSegments(definition, segments.slice(0, n), ['', '/mod'])) return true
      return false
    }
    case '.java': {
      const segments = spec.split('.')
      return segments.at(-1) === '*' ? path.posix.dirname(definition).endsWith(`/${segments.slice(0, -1).join('/')}`) : endsWithSegments(definition, segments)
    }
    case '.js': case '.mjs': case '.cjs': case '.jsx': case '.ts': case '.mts': case '.cts': case '.tsx':
      // A package name reaches no file of the workspace.
      return false
    default:
      // C and C++: an include is read from the file's folder, else names the end of a path (include folders are not known).
      return relative() || endsWithSegments(definition, withoutExtension(spec).split('/'))
  }
}

/** Languages whose definitions a file sees without an import when they are in its folder (a Go or Java package). */
const PACKAGE_FOLDERS = new Set(['.go', '.java'])

/** Ties files' references to a name's definitions: `attribute`, with what every file shares computed once. */
export type Attributor = (file: string, imports: readonly string[]) => Attribution

/**
 * Which of a name's definitions the references in a file mean: those in the file itself; else, for Go and Java,
 * those in its folder (its package); else those in files it includes or imports directly; else every one (the
 * name alone matched: `via: 'name'`). An import reaches the same definitions from every file of one folder and
 * language, so each (language, folder, specifier) is resolved once per attributor — thousands of files including
 * `linux/slab.h` cost one resolution per folder, not one per file and definition.
 */
export function attributor (definitions: readonly Defined[]): Attributor {
  const all = definitions.map((_, i) => i)
  const byPath = new Map<string, number[]>()
  for (const i of all) byPath.set(definitions[i].path, [...(byPath.get(definitions[i].path) ?? []), i])
  const reached = new Map<string, number[]>()
  return (file, imports) => {
    const same = byPath.get(file)
    if (same !== undefined) return { meant: same, via: 'same-file' }
    const folder = path.posix.dirname(file)
    const ext = extensionOf(file)
    if (PACKAGE_FOLDERS.has(ext)) {
      const packaged = all.filter(i => path.posix.dirname(definitions[i].path) === folder && extensionOf(definitions[i].path) === ext)
      if (packaged.length > 0) return { meant: packaged, via: 'import' }
    }
    const imported = new Set<number>()
    for (const spec of imports) {
      const key = `${ext}\0${folder}\0${spec}`
      let hits = reached.get(key)
      if (hits === undefined) {
        hits = all.filter(i => importReaches(spec, file, definitions[i].path))
        reached.set(key, hits)
      }
      for (const i of hits) imported.add(i)
    }
    if (imported.size > 0) return { meant: [...imported].sort((a, b) => a - b), via: 'import' }
    return { meant: all, via: 'name' }
  }
}

/** `attributor(definitions)` for one file. */
export function attribute (file: string, imports: readonly string[], definitions: readonly Defined[]): Attribution {
  return attributor(definitions)(file, imports)
}
