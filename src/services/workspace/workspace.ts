import { lstat, realpath, type FileHandle } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { toolError, type ToolError } from '../../base/errors.js'
import { errCode, fsError, fsErrorFor } from './fs-errors.js'
import { isOutside, walkBeneath, type Walked } from './beneath.js'
import { DESCRIBE_FLAGS, entryFacts } from './entry-facts.js'
import { pinnedCursor, type PinnedCursor } from './pinned-cursor.js'
import { createIgnoreRules, IGNORE_FILES } from './ignore-rules.js'
import { createLimiter } from '../limiter.js'
import { byteString, displayName, displayText, fsPathOf, parseName } from './path-names.js'
import { openVerified, readVerified, type Containment, type Opened } from './open-verified.js'
import { kindOf, promiseFs, statEntries } from './fs-ops.js'
import { constants as fsc } from 'node:fs'
import { suggestPaths } from './suggest.js'
import { walkTree } from './walk.js'
import { walkFolders, type FolderWalkHost } from './folder-walk.js'
import { sharedWalkThreads, WalkThreadError } from './walk-thread.js'
import type { WorkspaceOptions, WorkspaceService } from './types.js'
import { countLines, readLineWindow, sniffFile } from './file-lines.js'
import { createPdfReader } from './pdf-text.js'
import type { WalkOptions, WalkResult } from './walk-types.js'
import type { LinkTarget } from './entry-types.js'

export { kindOf }
export type { InspectedPath, PinnedPath, ResolvedPath, ResolveOptions, WorkspaceOptions, WorkspacePart, WorkspaceRoot, WorkspaceService } from './types.js'

// eslint-disable-next-line no-control-regex -- rejecting control characters is the point
const CONTROL = /[\u0000-\u001f\u007f]/
const MAX_PATH_CHARS = 4096
/** Largest ignore file read; a bigger one is skipped whole (half a rule set would be wrong) and logged. */
const RULE_FILE_BYTES = 1024 * 1024
/** Reads of files above this size take a slot of the limiter's `read` pool. */
const LARGE_READ_BYTES = 1024 * 1024

/** What opening an entry just looked at answers when it has changed since into a link, a socket or a device. */
const CHANGED_SINCE = new Set(['ELOOP', 'ENXIO', 'ENODEV', 'EOPNOTSUPP'])

/** Joins a child's raw name onto a parent fs path, staying a string while everything is UTF-8. */
function joinFs (parent: string | Buffer, name: Buffer): string | Buffer {
  const text = name.toString('utf8')
  if (typeof parent === 'string' && Buffer.from(text).equals(name)) return path.join(parent, text)
  return Buffer.concat([typeof parent === 'string' ? Buffer.from(parent) : parent, Buffer.from('/'), name])
}

/** Canonicalises the root and returns the jail. */
export async function createWorkspace (opts: WorkspaceOptions): Promise<WorkspaceService> {
  const root = await realpath(path.resolve(opts.root))
  const rootBytes = byteString(root)
  const rootSlash = path.join(rootBytes, '/')
  const log = opts.log
  const allowHardLinks = opts.allowHardLinks ?? false
  const listing = opts.listing ?? promiseFs
  const limiter = opts.limiter ?? createLimiter()
  const name = opts.name ?? (path.basename(root) || '/')
  const prefix = opts.prefixed === true ? `${name}:` : ''
  const top = prefix === '' ? '.' : prefix

  /** The display form of a root-relative path ('.' for the root): with this root's `name:` when several are served. */
  const shownOf = (rel: string): string => rel === '.' ? top : prefix + rel
  /** A display path of this root back in root-relative form (`docs:` and `docs:/` are the root). */
  const own = (shown: string): string => prefix !== '' && shown.startsWith(prefix) ? shown.slice(prefix.length).replace(/^\/+/, '') || '.' : shown
  /** What the display paths of a folder's children start with. */
  const baseOf = (rel: string): string => rel === '.' ? prefix : `${prefix}${rel}/`

  /** Display-relative path of a real byte-string path, or undefined when it is outside the root. */
  function relativeOf (realBytes: string): string | undefined {
    const rel = path.relative(rootBytes, realBytes)
    if (isOutside(rel)) return undefined
    return shownOf(rel === '' ? '.' : displayName(Buffer.from(rel, 'latin1')))
  }

  /** Parse → lexical containment. Returns the components below the root and the safe text to echo. */
  function lexicalOf (input: unknown, field: string): { components: string[], shown: string } {
    if (typeof input !== 'string') throw toolError('INVALID_PATH', `${field} must be a string`, `pass a path relative to the workspace root, e.g. ${field}="src/index.ts"`)
    if (input.length > MAX_PATH_CHARS) throw toolError('INVALID_PATH', `${field} is ${input.length} characters long (limit ${MAX_PATH_CHARS})`, 'use a shorter path')
    let p = input === '' ? '.' : own(input)
    if (p.startsWith('file://')) {
      try {
        p = fileURLToPath(p)
      } catch {
        throw toolError('INVALID_PATH', `${field} is not a valid file:// URL`, `pass a plain relative path, e.g. ${field}="src/index.ts"`)
      }
    }
    // Checked on the decoded form too: a file:// URL's %0A is a newline by now.
    const match = CONTROL.exec(p)
    if (match !== null) {
      const code = `\\u${match[0].charCodeAt(0).toString(16).padStart(4, '0')}`
      throw toolError('INVALID_PATH', `${field} contains the control character ${code}`, 'remove control characters (NUL, newlines, tabs) from the path, or spell a control byte of a name as \\xHH')
    }
    // Escapes are decoded before any check, and can only yield bytes that are not '.', '/' or NUL.
    const bytes = byteString(parseName(p))
    // Unreachable by construction (CONTROL refuses a raw NUL and no escape decodes to one: see the
    // path-properties test); kept as the last guard on the final bytes before they reach the kernel.
    /* c8 ignore next */
    if (bytes.includes('\0')) throw toolError('INVALID_PATH', `${field} contains a NUL byte`, 'remove it from the path')
    const rel = path.relative(rootBytes, path.resolve(rootBytes, bytes))
    if (isOutside(rel)) {
      // Echo relative input only: an absolute path outside the root is never repeated back.
      const shown = path.isAbsolute(p) ? 'the absolute path given' : `"${displayName(Buffer.from(bytes, 'latin1'))}"`
      throw toolError('PATH_OUTSIDE_ROOT', `${field}: ${shown} is outside the workspace`, { step: 'list-from-root', field })
    }
    return { components: rel === '' ? [] : rel.split('/'), shown: shownOf(rel === '' ? '.' : displayName(Buffer.from(rel, 'latin1'))) }
  }

  const escapes = (shown: string, field: string): ToolError =>
    toolError('SYMLINK_ESCAPES_ROOT', `${field}: "${shown}" is (or passes through) a symbolic link to a location outside the workspace; it is not followed`, { step: 'inside-only' })

  async function notFound (walked: Extract<Walked, { state: 'missing' }>, shown: string, field: string, signal?: AbortSignal): Promise<ToolError> {
    if (walked.viaLink) return toolError('PATH_NOT_FOUND', `${field}: "${shown}" is, or passes through, a broken symbolic link (its target does not exist)`, { step: 'list-links' })
    const suggestions = await suggestPaths(service, shown, { signal }).catch(() => [])
    const hint = suggestions.length > 0 ? `did you mean: ${suggestions.join(', ')}?` : { step: 'list-or-find' } as const
    return toolError('PATH_NOT_FOUND', `${field}: "${shown}" does not exist`, hint)
  }

  /** Turns a walk outcome into a resolved path or the tool error every spelling of it gets. */
  async function settle (walked: Walked, shown: string, field: string, mustExist: boolean, signal?: AbortSignal): Promise<string> {
    switch (walked.state) {
      case 'found': return walked.real
      case 'escapes': throw escapes(shown, field)
      case 'error': throw fsErrorFor(walked.code, shown, field)
      case 'missing': {
        // What is left may hold '..' from a link's text: judged lexically, never looked up.
        const full = path.resolve(walked.real, ...walked.rest)
        if (relativeOf(full) === undefined) throw escapes(shown, field)
        if (mustExist) throw await notFound(walked, shown, field, signal)
        return full
      }
    }
  }

  /** Checks an open descriptor against the root (see open-verified.ts). */
  const within = (real: string): Containment => ({
    inside: fd => relativeOf(fd) !== undefined,
    async rewalk () {
      // `real` came out of a walk beneath the root; were it outside, its '..' would make this walk 'escapes'.
      const rel = path.relative(rootBytes, real)
      const walked = await walkBeneath(rootBytes, rel === '' ? [] : rel.split('/'), false)
      return walked.state === 'found' ? walked.stats : undefined
    }
  })

  /** openVerified with its failures as the tool errors the caller's argument gets. */
  async function opened (real: string, shown: string, field: string): Promise<Opened> {
    const result = await openVerified(fsPathOf(real), within(real), promiseFs)
    if (result.ok) return result.opened
    if (result.reason === 'escaped' || result.code === 'ELOOP') {
      throw toolError('SYMLINK_ESCAPES_ROOT', `${field}: "${shown}" changed into, or now passes through, a symbolic link while being opened`, 'call again; if it persists, the workspace is being changed under the server')
    }
    if (result.reason === 'special') throw toolError('NOT_A_REGULAR_FILE', `${field}: "${shown}" is not a regular file (FIFO, socket or device); it is never opened`, 'only regular files can be read')
    throw fsErrorFor(result.code, shown, field)
  }

  /**
   * Where the link at `real` (a byte string) points, read only inside the root. `pinned`: walked through held
   * descriptors where /proc has them, so a folder swapped on the way cannot make it judge an outside link.
   */
  async function targetOf (real: string, pinned: boolean): Promise<LinkTarget> {
    const rel = path.relative(rootBytes, real)
    if (isOutside(rel)) return { state: 'outside' }
    const cursor = pinned ? await pinnedCursor(rootBytes, promiseFs) : undefined
    let walked: Walked
    try {
      walked = await walkBeneath(rootBytes, rel.split('/'), true, cursor)
    } finally {
      await cursor?.close()
    }
    switch (walked.state) {
      // A walk beneath the root that found its target found it inside.
      case 'found': return { state: 'inside', relative: relativeOf(walked.real) as string, kind: kindOf(walked.stats) }
      case 'escapes': return { state: 'outside' }
      case 'missing': return relativeOf(path.resolve(walked.real, ...walked.rest)) === undefined ? { state: 'outside' } : { state: 'broken' }
      case 'error':
        if (walked.code === 'ELOOP') return { state: 'loop' }
        if (walked.code === 'ENOTDIR') return { state: 'broken' }
        log.debug({ code: walked.code }, 'link target unreadable')
        return { state: 'unreadable' }
    }
  }

  /** Opens what a pinned walk found, through the folder it holds (`last` undefined: that folder itself). */
  async function openPinned (cursor: PinnedCursor, last: string | undefined, shown: string, field: string): Promise<FileHandle | undefined> {
    try {
      // /proc/self/fd/N names the held folder itself (a link only the kernel follows), so it is opened as it is.
      return last === undefined ? await promiseFs.open(cursor.at(), fsc.O_RDONLY | fsc.O_NONBLOCK) : await promiseFs.open(cursor.at(last), DESCRIBE_FLAGS)
    } catch (err) {
      const code = errCode(err) as string
      if (code === 'EACCES' || code === 'EPERM') return undefined
      throw fsErrorFor(CHANGED_SINCE.has(code) ? 'EINVAL' : code, shown, field)
    }
  }

  /** Where /proc is missing: what a path walk found, opened by path and checked after opening (open-verified.ts). */
  async function openChecked (real: string, shown: string, field: string): Promise<FileHandle | undefined> {
    try {
      return (await opened(real, shown, field)).handle
    } catch (err) {
      if ((err as ToolError).toolCode === 'PERMISSION_DENIED') return undefined
      throw err
    }
  }

  /** Text of a rule file in a folder known to be real and inside: one verified open, no walk (runs once per folder of a walk). */
  async function readRuleFile (dirRelative: string, name: string, maxBytes: number): Promise<string | undefined> {
    const dir = dirRelative === '.' ? rootBytes : path.join(rootBytes, byteString(parseName(dirRelative)))
    const file = path.join(dir, name)
    const result = await openVerified(fsPathOf(file), within(file), listing)
    if (!result.ok) {
      // A rule file that is itself a link is read the careful way (it may point anywhere inside).
      return result.code === 'ELOOP' ? service.readText(dirRelative === '.' ? name : `${dirRelative}/${name}`, maxBytes) : undefined
    }
    const { handle, stats } = result.opened
    try {
      return stats.isFile() ? await readVerified(handle, maxBytes) : undefined
    } finally {
      await handle.close()
    }
  }

  const service: WorkspaceService = {
    root,
    roots: [{ name, path: root }],

    async resolve (input, options = {}) {
      const field = options.field ?? 'path'
      const { components, shown } = lexicalOf(input, field)
      const walked = await walkBeneath(rootBytes, components, true)
      const real = await settle(walked, shown, field, options.mustExist ?? true, options.signal)
      // settle returns only paths it checked are inside, so relativeOf has an answer.
      const relative = relativeOf(real) as string
      return { relative, fsPath: fsPathOf(real), requested: shown, base: baseOf(own(relative)) }
    },

    lexical (input, field = 'path') {
      const { components, shown } = lexicalOf(input, field)
      return { relative: shown, bytes: Buffer.from(components.join('/'), 'latin1'), root: service.roots[0].name }
    },

    async openFile (resolved, field = 'path') {
      const shown = resolved.requested
      const { handle, stats } = await opened(byteString(resolved.fsPath), shown, field)
      if (stats.isFile() && (stats.nlink <= 1 || allowHardLinks)) return handle
      await handle.close()
      if (stats.isDirectory()) throw toolError('IS_A_DIRECTORY', `${field}: "${shown}" is a directory`, { step: 'list-the-directory', path: shown })
      // opened() hands back only files and folders, so this is a file with several links.
      throw toolError('HARD_LINK_REFUSED', `${field}: "${shown}" has ${stats.nlink} hard links; one may be outside the workspace, so its content is not served`,
        'read another file; the operator can allow hard-linked files with --allow-hard-links')
    },

    async pin (resolved, field = 'path') {
      // opened() refuses FIFOs, sockets and devices: what comes back is a file or a folder.
      const { handle, stats, procPath } = await opened(byteString(resolved.fsPath), resolved.requested, field)
      if (stats.isFile() && stats.nlink > 1 && !allowHardLinks) {
        await handle.close()
        throw toolError('HARD_LINK_REFUSED', `${field}: "${resolved.requested}" has ${stats.nlink} hard links; its content is not served`, 'search its folder instead; hard-linked files are skipped there too')
      }
      return { procPath: procPath ?? byteString(resolved.fsPath), isDirectory: stats.isDirectory(), close: () => handle.close() }
    },

    async readText (relative, maxBytes = 1024 * 1024) {
      try {
        const resolved = await service.resolve(relative, { field: 'file' })
        const handle = await service.openFile(resolved)
        try {
          return await readVerified(handle, maxBytes)
        } finally {
          await handle.close()
        }
      } catch (err) {
        log.debug({ file: relative, err }, 'workspace file not read')
        return undefined
      }
    },

    parts: (resolved) => [{ workspace: service, resolved, path: own(resolved.relative) }],

    isIgnored: (relative, isDirectory) => ignoreRules.isIgnored(own(relative), isDirectory),
    isIgnoredEntry: (parent, name, isDirectory) => ignoreRules.isIgnoredEntry(own(parent), name, isDirectory),
    async explainIgnored (relative, isDirectory) {
      const match = await ignoreRules.explain(own(relative), isDirectory)
      return match === undefined ? undefined : { ...match, where: prefix + match.where }
    },

    async readDirectory (dir) {
      const childBase = baseOf(own(dir.relative))
      const real = byteString(dir.fsPath)
      const result = await openVerified(dir.fsPath, within(real), listing)
      // Walks note raw fs codes per folder; ESCAPED means it was swapped for a link out of the root meanwhile.
      if (!result.ok) throw Object.assign(new Error(`cannot list: ${result.code}`), { code: result.reason === 'special' ? 'ENOTDIR' : result.code === 'ELOOP' ? 'ESCAPED' : result.code })
      const { handle, stats, procPath } = result.opened
      try {
        if (!stats.isDirectory()) throw Object.assign(new Error('not a directory'), { code: 'ENOTDIR' })
        const where = procPath ?? dir.fsPath
        // Fast path: decoded names. Only a folder holding a name that is not UTF-8 (seen as U+FFFD) is re-read as bytes.
        if (typeof dir.fsPath === 'string') {
          const dirents = await listing.readdirNames(where)
          if (!dirents.some(d => d.name.includes('\uFFFD'))) {
            if (!dirents.some(d => (IGNORE_FILES as readonly string[]).includes(d.name))) ignoreRules.noRuleFilesIn(own(dir.relative))
            const base = dir.fsPath === '/' ? '' : dir.fsPath
            return dirents.map(d => {
              const name = displayText(d.name)
              return { name, relative: childBase + name, fsPath: `${base}/${d.name}`, kind: kindOf(d) }
            })
          }
        }
        const dirents = await listing.readdirBytes(where)
        return dirents.map(d => {
          const bytes = d.name as unknown as Buffer
          const name = displayName(bytes)
          return { name, relative: childBase + name, fsPath: joinFs(dir.fsPath, bytes), kind: kindOf(d) }
        })
      } finally {
        await handle.close()
      }
    },

    linkTarget: async ({ fsPath }) => await targetOf(byteString(fsPath), false),

    async inspect (input, field = 'path', signal) {
      const { components, shown } = lexicalOf(input, field)
      // Every fact comes from a descriptor the walk holds, never from a second lookup by path: a folder on the way
      // swapped for a link to the outside between two lookups made one describe the outside file (issue 40).
      const cursor = await pinnedCursor(rootBytes, promiseFs)
      try {
        const walked = await walkBeneath(rootBytes, components, false, cursor)
        await settle(walked, shown, field, true, signal)
        // settle returned, so every component was found (mustExist).
        const { real, stats, last } = walked as Extract<Walked, { state: 'found' }>
        const fsPath = fsPathOf(real)
        const facts = await entryFacts(stats, {
          open: async () => cursor === undefined ? await openChecked(real, shown, field) : await openPinned(cursor, last, shown, field),
          // Listed through the descriptor itself where /proc has it; elsewhere by path (see SECURITY.md).
          listPath: handle => cursor === undefined ? fsPath : `/proc/self/fd/${handle.fd}`,
          listing: promiseFs,
          allowHardLinks
        })
        return facts.kind === 'symlink' ? { relative: shown, fsPath, ...facts, link: await targetOf(real, true) } : { relative: shown, fsPath, ...facts }
      } finally {
        await cursor?.close()
      }
    },

    async stat (resolved, field = 'path') {
      try {
        return await lstat(resolved.fsPath)
      } catch (err) {
        throw fsError(err, resolved.requested, field)
      }
    },

    entryStats: async (entries) => await statEntries(listing, entries),
    walk: (options) => limiter.run('walk', options.signal, () => walkAnywhere(options)),
    sniff: sniffFile,
    readLines: (handle, size, sniff, request) => size <= LARGE_READ_BYTES
      ? readLineWindow(handle, size, sniff, request)
      : limiter.run('read', request.signal, () => readLineWindow(handle, size, sniff, request)),
    countLines,
    pdf: opts.pdf ?? createPdfReader(),
    fsError
  }
  const ignoreRules = createIgnoreRules((dir, name) => readRuleFile(dir, name, RULE_FILE_BYTES))

  const host: FolderWalkHost = {
    // readlink of /proc/self/fd/N gives the folder's canonical path: inside is the root or below it, no resolving needed.
    inside: real => real === rootBytes || real.startsWith(rootSlash),
    childBase: relative => baseOf(own(relative)),
    own,
    rules: ignoreRules,
    readLinkedRule: async relative => await service.readText(relative, RULE_FILE_BYTES),
    linkTarget: service.linkTarget
  }
  const walks = opts.walkHere === true ? undefined : opts.walks ?? sharedWalkThreads()

  /**
   * A walk given as data, of more than one level, runs on a walk thread, descriptor-relative; one level (a thread
   * hop costs more than one listing), or one given functions, runs here. A thread that fails hands the walk back.
   */
  async function walkAnywhere (options: WalkOptions): Promise<WalkResult> {
    if (opts.walkHere === true) return await walkFolders(host, options)
    const { signal, keepDir, keepEntry, order, stopped, ...spec } = options
    if (walks !== undefined && process.platform === 'linux' && options.maxDepth > 1 && keepDir === undefined && keepEntry === undefined && order === undefined && stopped === undefined) {
      try {
        const answer = await walks.run({ path: root, name, prefixed: prefix !== '' }, spec, signal)
        if ('result' in answer) return answer.result
        throw fsError(Object.assign(new Error(answer.failed), { code: answer.failed }), options.start.relative)
      } catch (err) {
        if (!(err instanceof WalkThreadError)) throw err
        log.warn({ err }, 'a walk thread failed; walking in the serving thread')
      }
    }
    return await walkTree(service, options)
  }
  return service
}

export type { DirEntry, EntryKind, LinkTarget } from './entry-types.js'
