import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { toolError } from '../../base/errors.js'
import { isOutside } from './beneath.js'
import type { Limiter } from '../limiter.js'
import { walkTree } from './walk.js'
import type { ResolvedPath, WorkspaceService } from './types.js'
import type { DirEntry } from './entry-types.js'

/** What a root may be called: the `name:` that starts its paths. */
export const ROOT_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/
const PREFIXED = /^([A-Za-z0-9][A-Za-z0-9._-]{0,63}):/

/**
 * Serves several roots as one workspace. A path names its root with `name:` (`docs:guide.md`); without one it
 * is in the first root; '.' is the top of them all, which list_directory, find_files and search_regex cover by
 * default. Each root stays its own jail: a link from one root into another is outside, as it would be were
 * that root not served. One root is served as itself, so a single-root server is unchanged.
 */
export function createWorkspaceSet (members: WorkspaceService[], limiter: Limiter): WorkspaceService {
  if (members.length === 1) return members[0]
  const first = members[0]
  const roots = members.map(m => m.roots[0])
  const byName = new Map(members.map(m => [m.roots[0].name, m]))
  const listed = roots.map(r => `"${r.name}:"`).join(', ')
  const top: ResolvedPath = { relative: '.', fsPath: first.root, requested: '.', base: '' }
  const isTop = (input: unknown): boolean => input === '.' || input === ''

  /** The root a path argument is in: its `name:`, the root holding an absolute path, or else the first. */
  function memberOf (input: unknown, field: string): WorkspaceService {
    // Not a string, or a file:// URL that does not parse: the first root's checks refuse it with the usual error.
    if (typeof input !== 'string') return first
    let absolute = path.isAbsolute(input) ? input : undefined
    if (input.startsWith('file://')) {
      try {
        absolute = fileURLToPath(input)
      } catch {
        return first
      }
    }
    if (absolute !== undefined) {
      // The innermost root holding it (roots may nest); in none, the first root refuses it without echoing it.
      const holding = members.filter(m => !isOutside(path.relative(m.root, absolute)))
      return holding.sort((a, b) => b.root.length - a.root.length)[0] ?? first
    }
    const match = PREFIXED.exec(input)
    if (match === null) return first
    const member = byName.get(match[1])
    if (member !== undefined) return member
    throw toolError('UNKNOWN_ROOT', `${field}: "${match[1]}:" names no served root (the roots are ${listed})`,
      `start the path with one of them, or with none for the first root (a file of the first root whose name holds a colon: ${field}="${roots[0].name}:${match[0]}…")`)
  }

  /** The root of a display path this workspace produced ('.' is the top: its first root answers for it). */
  const ownerOf = (shown: string): WorkspaceService => byName.get(PREFIXED.exec(shown)?.[1] ?? '') ?? first

  const service: WorkspaceService = {
    root: first.root,
    roots,
    resolve: async (input, options = {}) => isTop(input) ? top : await memberOf(input, options.field ?? 'path').resolve(input, options),
    lexical: (input, field = 'path') => (isTop(input) ? first : memberOf(input, field)).lexical(input, field),
    parts (resolved) {
      if (resolved.relative !== '.') return ownerOf(resolved.relative).parts(resolved)
      return members.map(m => {
        const name = `${m.roots[0].name}:`
        return { workspace: m, resolved: { relative: name, fsPath: m.root, requested: name, base: name }, path: '.' }
      })
    },
    openFile: async (resolved, field) => await ownerOf(resolved.relative).openFile(resolved, field),
    pin: async (resolved, field) => await ownerOf(resolved.relative).pin(resolved, field),
    stat: async (resolved, field) => await ownerOf(resolved.relative).stat(resolved, field),
    readText: async (relative, maxBytes) => await ownerOf(relative).readText(relative, maxBytes),
    // The roots themselves are never ignored: the top has no rule files.
    isIgnored: async (relative, isDirectory) => relative !== '.' && await ownerOf(relative).isIgnored(relative, isDirectory),
    isIgnoredEntry: async (parent, name, isDirectory) => parent !== '.' && await ownerOf(parent).isIgnoredEntry(parent, name, isDirectory),
    explainIgnored: async (relative, isDirectory) => await ownerOf(relative).explainIgnored(relative, isDirectory),
    async readDirectory (dir) {
      if (dir.relative !== '.') return await ownerOf(dir.relative).readDirectory(dir)
      return roots.map((r): DirEntry => ({ name: `${r.name}:`, relative: `${r.name}:`, fsPath: r.path, kind: 'dir' }))
    },
    linkTarget: async (link) => await ownerOf(link.relative).linkTarget(link),
    // One folder's entries come from one root (the top's entries are the roots: the first one reads those).
    entryStats: async (entries) => entries.length === 0 ? [] : await ownerOf(entries[0].relative).entryStats(entries),
    inspect: async (input, field = 'path', signal) => await (isTop(input) ? first : memberOf(input, field)).inspect(input, field, signal),
    walk: async (options) => options.start.relative === '.'
      ? await limiter.run('walk', options.signal, async () => await walkTree(service, options))
      : await ownerOf(options.start.relative).walk(options),
    sniff: first.sniff,
    readLines: first.readLines,
    countLines: first.countLines,
    pdf: first.pdf,
    fsError: first.fsError
  }
  return service
}
