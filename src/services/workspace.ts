import { constants as fsc, type Stats } from 'node:fs'
import { lstat, open, readdir, readlink, realpath, type FileHandle } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { toolError, type ToolError } from '../errors.js'
import type { Logger } from '../logger.js'
import { createIgnoreRules } from './ignore-rules.js'
import { byteString, displayName, fsPathOf, hasByteEscapes, unescapeBytes } from './path-names.js'
import { suggestPaths } from './suggest.js'
import { walkTree, type WalkOptions, type WalkResult } from './walk.js'
import { countLines, readLineWindow, sniffFile, type FileSniff, type LineWindow, type WindowRequest } from './file-lines.js'

/** A path argument after resolution: inside the root, symlinks resolved. */
export interface ResolvedPath {
  /** POSIX path relative to the root ('.' for the root), of the real (symlink-free) location; odd bytes as `\xHH`. */
  relative: string
  /** Real absolute path after realpath (lossy UTF-8 if the name is not valid UTF-8; use fsPath for I/O). */
  absolute: string
  /** What to hand to node:fs for this path: a string, or a Buffer when a name is not valid UTF-8. */
  fsPath: string | Buffer
  /** The path as the caller named it, relative to the root (before symlinks were resolved). */
  requested: string
}

/** Kind of a directory entry, from its own lstat (links are never followed). */
export type EntryKind = 'file' | 'dir' | 'symlink' | 'fifo' | 'socket' | 'device' | 'other'

/** One entry of a directory read by readDirectory. */
export interface DirEntry {
  /** Display name (`\xHH` for bytes that are not UTF-8). */
  name: string
  /** Display path relative to the root. */
  relative: string
  fsPath: string | Buffer
  kind: EntryKind
}

/** Where a symbolic link points, told without revealing anything outside the root. */
export type LinkTarget =
  | { state: 'inside', relative: string, kind: EntryKind }
  | { state: 'outside' | 'broken' | 'loop' | 'unreadable' }

/** A path looked at without following its last component (get_file_info). */
export interface InspectedPath {
  /** Display path relative to the root, as named (not resolved). */
  relative: string
  fsPath: string | Buffer
  stats: Stats
  kind: EntryKind
  /** Set when the path itself is a symbolic link. */
  link?: LinkTarget
}

/** The workspace root jail every path argument goes through. */
export interface WorkspaceService {
  /** Canonical (realpath) absolute root. */
  readonly root: string
  /**
   * Control chars → lexical resolve against root → outside? PATH_OUTSIDE_ROOT (before any disk access) → realpath
   * (nearest existing ancestor on ENOENT) → outside? SYMLINK_ESCAPES_ROOT → if mustExist and missing: PATH_NOT_FOUND
   * with up to 3 in-root suggestions. Throws toolError(...); `field` names the argument.
   */
  resolve(path: string, options?: { field?: string, mustExist?: boolean }): Promise<ResolvedPath>
  /** Opens the real path O_RDONLY|O_NOFOLLOW|O_NONBLOCK; only a regular file is returned (else IS_A_DIRECTORY / NOT_A_REGULAR_FILE). */
  openFile(path: ResolvedPath, field?: string): Promise<FileHandle>
  /** .gitignore/.ignore aware, nested rule files honoured, `.git/` always ignored. */
  isIgnored(relative: string, isDirectory: boolean): Promise<boolean>
  /** The verdict for a child of a directory already known not to be ignored (cheaper, for walks). */
  isIgnoredEntry(parentRelative: string, name: string, isDirectory: boolean): Promise<boolean>
  /** Lists one directory by raw names (no decoding loss), kinds from the dirent; links are not followed. */
  readDirectory(dir: { relative: string, fsPath: string | Buffer }): Promise<DirEntry[]>
  /** Tells where a symbolic link (given by its own fs path) points, safely. */
  linkTarget(fsPath: string | Buffer): Promise<LinkTarget>
  /** lstat of a path whose parent is resolved inside the root: the last component is not followed. */
  inspect(path: string, field?: string): Promise<InspectedPath>
  /** stat of a resolved path (follows nothing further: it is already real); fs errors become tool errors. */
  stat(path: ResolvedPath, field?: string): Promise<Stats>
  /** Walks a directory (links shown, never followed; unreadable entries noted; bounded). */
  walk(options: WalkOptions): Promise<WalkResult>
  /** Binary check and text encoding from the first 8 KiB of an open file. */
  sniff(handle: FileHandle): Promise<FileSniff>
  /** A window of lines of an open file (whole read up to 10 MB, streamed beyond). */
  readLines(handle: FileHandle, size: number, sniff: FileSniff, request: WindowRequest): Promise<LineWindow>
  /** Lines in an open file, by a streaming scan. */
  countLines(handle: FileHandle, size: number, signal?: AbortSignal): Promise<number>
  /** Maps an fs error to the tool error for `shown` (EACCES → PERMISSION_DENIED …); rethrows the unknown. */
  fsError(err: unknown, shown: string, field?: string): ToolError
}

// eslint-disable-next-line no-control-regex -- rejecting control characters is the point
const CONTROL = /[\u0000-\u001f\u007f]/
const MAX_PATH_CHARS = 4096

/** Containment on path.relative output (never a string prefix: CVE-2025-53110). */
function isOutside (rel: string): boolean {
  return rel === '..' || rel.startsWith('..' + path.sep) || path.isAbsolute(rel)
}

const errCode = (err: unknown): string | undefined => (err as NodeJS.ErrnoException)?.code

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

/** Joins a child's raw name onto a parent fs path, staying a string while everything is UTF-8. */
function joinFs (parent: string | Buffer, name: Buffer): string | Buffer {
  const text = name.toString('utf8')
  if (typeof parent === 'string' && Buffer.from(text).equals(name)) return parent === '/' ? `/${text}` : `${parent}/${text}`
  return Buffer.concat([typeof parent === 'string' ? Buffer.from(parent) : parent, Buffer.from('/'), name])
}

/** Canonicalises the root and returns the jail. */
export async function createWorkspace (opts: { root: string, log: Logger }): Promise<WorkspaceService> {
  const root = await realpath(path.resolve(opts.root))
  const rootBytes = byteString(root)
  const log = opts.log

  /** Display-relative path of a real byte-string path, or undefined when it is outside the root. */
  function relativeOf (realBytes: string): string | undefined {
    const rel = path.relative(rootBytes, realBytes)
    if (isOutside(rel)) return undefined
    return rel === '' ? '.' : displayName(Buffer.from(rel.split(path.sep).join('/'), 'latin1'))
  }

  const absoluteOf = (relative: string): string | Buffer => relative === '.' ? root : fsPathOf(path.join(rootBytes, byteString(relative)))
  const ignoreRules = createIgnoreRules(absoluteOf)

  function fsError (err: unknown, shown: string, field = 'path'): ToolError {
    switch (errCode(err)) {
      case 'EACCES':
      case 'EPERM':
        return toolError('PERMISSION_DENIED', `"${shown}" is not readable by the server`, `ask for another path; get_file_info ${field}="${shown}" shows what is known about it`)
      case 'ENOENT':
        return toolError('PATH_NOT_FOUND', `"${shown}" does not exist (it may have just been removed)`, 'list_directory shows what is there now')
      case 'ELOOP':
        return toolError('INVALID_PATH', `"${shown}" is a symbolic link loop; it cannot be resolved`, 'name the link\'s target instead')
      case 'ENAMETOOLONG':
        return toolError('INVALID_PATH', `"${shown.slice(0, 80)}…" is too long`, 'use a shorter path')
      case 'ENOTDIR':
        return toolError('NOT_A_DIRECTORY', `a parent of "${shown}" is a file, not a directory`, 'list_directory shows the real layout')
      default:
        throw err
    }
  }

  /** realpath that also understands `\xHH` escapes for names that are not UTF-8; returns a byte string. */
  async function realBytes (lexicalBytes: string): Promise<string> {
    try {
      return byteString(await realpath(fsPathOf(lexicalBytes), { encoding: 'buffer' }))
    } catch (err) {
      const unescaped = byteString(unescapeBytes(Buffer.from(lexicalBytes, 'latin1').toString('utf8')))
      if ((errCode(err) === 'ENOENT' || errCode(err) === 'ENOTDIR') && unescaped !== lexicalBytes && hasByteEscapes(lexicalBytes)) {
        return byteString(await realpath(Buffer.from(unescaped, 'latin1'), { encoding: 'buffer' }))
      }
      throw err
    }
  }

  function lexicalOf (input: unknown, field: string): { lexical: string, shown: string } {
    if (typeof input !== 'string') throw toolError('INVALID_PATH', `${field} must be a string`, `pass a path relative to the workspace root, e.g. ${field}="src/index.ts"`)
    const match = CONTROL.exec(input)
    if (match !== null) {
      const code = `\\u${match[0].charCodeAt(0).toString(16).padStart(4, '0')}`
      throw toolError('INVALID_PATH', `${field} contains the control character ${code}`, 'remove control characters (NUL, newlines, tabs) from the path')
    }
    if (input.length > MAX_PATH_CHARS) throw toolError('INVALID_PATH', `${field} is ${input.length} characters long (limit ${MAX_PATH_CHARS})`, 'use a shorter path')
    let p = input === '' ? '.' : input
    if (p.startsWith('file://')) {
      try {
        p = fileURLToPath(p)
      } catch {
        throw toolError('INVALID_PATH', `${field} is not a valid file:// URL`, `pass a plain relative path, e.g. ${field}="src/index.ts"`)
      }
    }
    const lexical = path.resolve(root, p)
    const rel = path.relative(root, lexical)
    if (isOutside(rel)) {
      // Echo relative input only: an absolute path outside the root is never repeated back.
      const shown = path.isAbsolute(p) ? 'the absolute path given' : `"${p}"`
      throw toolError('PATH_OUTSIDE_ROOT', `${field}: ${shown} is outside the workspace`, `use a path relative to the workspace root, e.g. ${field}="src" (list_directory path="." shows the top level)`)
    }
    return { lexical: byteString(lexical), shown: rel === '' ? '.' : rel.split(path.sep).join('/') }
  }

  const escapes = (shown: string, field: string): ToolError =>
    toolError('SYMLINK_ESCAPES_ROOT', `${field}: "${shown}" is (or passes through) a symbolic link to a location outside the workspace; it is not followed`, 'only paths inside the workspace can be used; list_directory shows links and where they point')

  /** Handles a path whose realpath failed with ENOENT: decide between escape, broken link and not found. */
  async function missing (lexical: string, shown: string, field: string, mustExist: boolean): Promise<ResolvedPath> {
    let ancestor = lexical
    let real: string | undefined
    while (real === undefined) {
      const parent = path.dirname(ancestor)
      if (parent === ancestor) throw fsErrorFor('ENOENT', shown, field)
      ancestor = parent
      try {
        real = await realBytes(ancestor)
      } catch (err) {
        const code = errCode(err)
        if (code !== 'ENOENT' && code !== 'ENOTDIR') throw fsError(err, shown, field)
      }
    }
    if (relativeOf(real) === undefined) throw escapes(shown, field)
    if (ancestor === path.dirname(lexical)) {
      // The parent is real and inside: a dangling link as the last component may still aim outside.
      const own = fsPathOf(path.join(real, path.basename(lexical)))
      const stats = await lstat(own).catch(() => undefined)
      if (stats?.isSymbolicLink() === true) {
        const target = byteString(await readlink(own, { encoding: 'buffer' }))
        if (relativeOf(path.resolve(real, target)) === undefined) throw escapes(shown, field)
        if (mustExist) throw toolError('PATH_NOT_FOUND', `${field}: "${shown}" is a broken symbolic link (its target does not exist)`, 'list_directory shows links and where they point')
      }
    }
    if (mustExist) {
      const suggestions = await suggestPaths(service, shown).catch(() => [])
      const hint = suggestions.length > 0
        ? `did you mean: ${suggestions.join(', ')}?`
        : 'list_directory or find_files shows what exists'
      throw toolError('PATH_NOT_FOUND', `${field}: "${shown}" does not exist`, hint)
    }
    const full = path.join(real, path.relative(ancestor, lexical))
    return { relative: relativeOf(full) ?? shown, absolute: Buffer.from(full, 'latin1').toString('utf8'), fsPath: fsPathOf(full), requested: shown }
  }

  function fsErrorFor (code: string, shown: string, field: string): ToolError {
    return fsError(Object.assign(new Error(code), { code }), shown, field)
  }

  const service: WorkspaceService = {
    root,

    async resolve (input, options = {}) {
      const field = options.field ?? 'path'
      const mustExist = options.mustExist ?? true
      const { lexical, shown } = lexicalOf(input, field)
      let real: string
      try {
        real = await realBytes(lexical)
      } catch (err) {
        if (errCode(err) === 'ENOENT') return missing(lexical, shown, field, mustExist)
        throw fsError(err, shown, field)
      }
      const relative = relativeOf(real)
      if (relative === undefined) throw escapes(shown, field)
      return { relative, absolute: Buffer.from(real, 'latin1').toString('utf8'), fsPath: fsPathOf(real), requested: shown }
    },

    async openFile (resolved, field = 'path') {
      const shown = resolved.requested
      let handle: FileHandle
      try {
        handle = await open(resolved.fsPath, fsc.O_RDONLY | fsc.O_NOFOLLOW | fsc.O_NONBLOCK)
      } catch (err) {
        const code = errCode(err)
        if (code === 'ELOOP') throw toolError('INVALID_PATH', `${field}: "${shown}" changed into a symbolic link while being opened`, 'call again')
        if (code === 'ENXIO' || code === 'ENODEV' || code === 'EOPNOTSUPP') {
          throw toolError('NOT_A_REGULAR_FILE', `${field}: "${shown}" is not a regular file (socket or device)`, 'only regular files can be read')
        }
        throw fsError(err, shown, field)
      }
      try {
        const stats = await handle.stat()
        if (stats.isFile()) return handle
        if (stats.isDirectory()) throw toolError('IS_A_DIRECTORY', `${field}: "${shown}" is a directory`, `list_directory path="${shown}" lists it`)
        throw toolError('NOT_A_REGULAR_FILE', `${field}: "${shown}" is a ${kindOf(stats)}, not a regular file`, 'only regular files can be read')
      } catch (err) {
        await handle.close()
        throw err
      }
    },

    isIgnored: ignoreRules.isIgnored,
    isIgnoredEntry: ignoreRules.isIgnoredEntry,

    async readDirectory (dir) {
      const prefix = dir.relative === '.' ? '' : `${dir.relative}/`
      // Fast path: decoded names. Only a folder holding a name that is not UTF-8 (seen as U+FFFD) is re-read as bytes.
      if (typeof dir.fsPath === 'string') {
        const dirents = await readdir(dir.fsPath, { withFileTypes: true })
        if (!dirents.some(d => d.name.includes('\uFFFD'))) {
          const base = dir.fsPath === '/' ? '' : dir.fsPath
          return dirents.map(d => ({ name: d.name, relative: prefix + d.name, fsPath: `${base}/${d.name}`, kind: kindOf(d) }))
        }
      }
      const dirents = await readdir(dir.fsPath, { withFileTypes: true, encoding: 'buffer' })
      return dirents.map(d => {
        const bytes = d.name as unknown as Buffer
        const name = displayName(bytes)
        return { name, relative: prefix + name, fsPath: joinFs(dir.fsPath, bytes), kind: kindOf(d) }
      })
    },

    async linkTarget (fsPath) {
      let real: string
      try {
        real = byteString(await realpath(fsPath, { encoding: 'buffer' }))
      } catch (err) {
        const code = errCode(err)
        if (code === 'ELOOP') return { state: 'loop' }
        if (code === 'ENOENT' || code === 'ENOTDIR') return { state: 'broken' }
        log.debug({ err }, 'link target unreadable')
        return { state: 'unreadable' }
      }
      const relative = relativeOf(real)
      if (relative === undefined) return { state: 'outside' }
      const stats = await lstat(fsPathOf(real)).catch(() => undefined)
      return { state: 'inside', relative, kind: stats === undefined ? 'other' : kindOf(stats) }
    },

    async inspect (input, field = 'path') {
      const { lexical, shown } = lexicalOf(input, field)
      if (path.relative(rootBytes, lexical) === '') {
        const stats = await lstat(root)
        return { relative: '.', fsPath: root, stats, kind: 'dir' }
      }
      const parent = await service.resolve(Buffer.from(path.dirname(lexical), 'latin1').toString('utf8'), { field })
      const parentBytes = byteString(parent.fsPath)
      let own = fsPathOf(path.join(parentBytes, path.basename(lexical)))
      let stats = await lstat(own).catch((err: unknown) => err as Error)
      if (stats instanceof Error && errCode(stats) === 'ENOENT' && hasByteEscapes(shown)) {
        own = fsPathOf(path.join(parentBytes, byteString(unescapeBytes(path.basename(shown)))))
        stats = await lstat(own).catch((err: unknown) => err as Error)
      }
      if (stats instanceof Error) {
        // Not there: resolve() throws PATH_NOT_FOUND with suggestions (or the matching error).
        if (errCode(stats) === 'ENOENT') await service.resolve(shown, { field })
        throw fsError(stats, shown, field)
      }
      const kind = kindOf(stats)
      const relative = parent.requested === '.' ? path.basename(shown) : `${parent.requested}/${path.basename(shown)}`
      return kind === 'symlink'
        ? { relative, fsPath: own, stats, kind, link: await service.linkTarget(own) }
        : { relative, fsPath: own, stats, kind }
    },

    async stat (resolved, field = 'path') {
      try {
        return await lstat(resolved.fsPath)
      } catch (err) {
        throw fsError(err, resolved.requested, field)
      }
    },

    walk: (options) => walkTree(service, options),
    sniff: sniffFile,
    readLines: readLineWindow,
    countLines,
    fsError
  }
  return service
}
