import { createHash } from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import type { Logger } from '../../base/logger.js'
import type { RootSpec } from '../../base/config.js'

/** Where an index lives, and whether it is a temporary file to remove at exit. */
export interface IndexLocation {
  file: string
  temporary: boolean
  /** The state folder asked for (the file is elsewhere when it is temporary). */
  dir: string
}

/** The state folder by default: $XDG_STATE_HOME/workspace-mcp, else ~/.local/state/workspace-mcp. */
export function defaultStateDir (env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_STATE_HOME !== undefined && path.isAbsolute(env.XDG_STATE_HOME) ? env.XDG_STATE_HOME : path.join(os.homedir(), '.local', 'state')
  return path.join(base, 'workspace-mcp')
}

/**
 * The index file of a set of roots: `index-<hash>.sqlite` in the state folder (created private to this user),
 * the hash taken over the roots' names and paths so another set never shares it. When the folder cannot be
 * made or written, a file in a folder of its own in the system's temporary folder instead (the index then lasts
 * one run). With
 * `create: false` (a shared index, only read) the folder is taken as it is.
 */
export function indexLocation (stateDir: string, roots: readonly RootSpec[], log: Logger, options: { create?: boolean } = {}): IndexLocation {
  const key = createHash('sha256').update(roots.map(r => `${r.name}=${r.path}`).join('\n')).digest('hex').slice(0, 16)
  const dir = stateDir === '' ? defaultStateDir() : path.resolve(stateDir)
  // A shared index is only read: its folder may well be read-only, and is never made.
  if (options.create === false) return { file: path.join(dir, `index-${key}.sqlite`), temporary: false, dir }
  try {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 })
    fs.accessSync(dir, fs.constants.W_OK)
    return { file: path.join(dir, `index-${key}.sqlite`), temporary: false, dir }
  } catch (err) {
    log.warn({ err, stateDir: dir }, 'state folder not writable: the code index lasts this run only')
    return { file: path.join(privateTemporaryFolder(log), `workspace-mcp-index-${key}-${process.pid}.sqlite`), temporary: true, dir }
  }
}

/** Prefix of the folder a temporary index gets in the system's temporary folder. */
const TEMPORARY_PREFIX = 'workspace-mcp-'

/**
 * A folder of its own for a temporary index: owner-only, its name not guessable. The index holds the source's
 * signatures and words (SECURITY.md), and SQLite makes its files readable by everyone the umask lets; in the
 * system's temporary folder itself any local user could read them, or plant a link where the file would go.
 */
function privateTemporaryFolder (log: Logger): string {
  try {
    return fs.mkdtempSync(path.join(os.tmpdir(), TEMPORARY_PREFIX))
  } catch (err) {
    log.warn({ err }, 'no private temporary folder: the code index lasts this run only, in the temporary folder itself')
    return os.tmpdir()
  }
}

/** Removes an index file and its WAL companions (a temporary index at exit). */
export function removeIndexFile (file: string): void {
  for (const suffix of ['', '-wal', '-shm']) fs.rmSync(`${file}${suffix}`, { force: true })
}

/** Removes a temporary index at exit: its files, its lock, and the private folder it was made in. */
export function removeTemporaryIndex (file: string): void {
  removeIndexFile(file)
  fs.rmSync(`${file}.lock`, { force: true })
  const folder = path.dirname(file)
  if (path.dirname(folder) === os.tmpdir() && path.basename(folder).startsWith(TEMPORARY_PREFIX)) fs.rmSync(folder, { recursive: true, force: true })
}

/** Free bytes on the file system holding `dir`, or undefined when that cannot be read. */
export function freeBytes (dir: string): number | undefined {
  try {
    const stats = fs.statfsSync(dir)
    return stats.bavail * stats.bsize
  } catch {
    return undefined
  }
}

/** Limits on what the state folder keeps of other roots' indexes. */
export interface StateLimits {
  /** An index not written (scanned) for this long is removed. */
  maxAgeMs: number
  /** Beyond this many bytes in all, the least recently used indexes are removed (0: no limit). */
  maxBytes: number
}

const INDEX_NAME = /^index-[0-9a-f]{16}\.sqlite$/
const COMPANIONS = ['', '-wal', '-shm', '.lock']

/**
 * Removes other roots' index files from the state folder: those unused for `maxAgeMs`, then, while the folder
 * holds more than `maxBytes`, the least recently used. Never `keep` (the served roots' own), never one whose lock
 * says another process is writing it now. Each removal is logged; returns the files removed.
 */
export function pruneStateDir (dir: string, keep: string, limits: StateLimits, log: Logger, now = Date.now()): string[] {
  let names: string[]
  try {
    names = fs.readdirSync(dir)
  } catch {
    return []
  }
  const sizeOf = (file: string): number => COMPANIONS.reduce((sum, suffix) => sum + (fs.statSync(`${file}${suffix}`, { throwIfNoEntry: false })?.size ?? 0), 0)
  const mtimeOf = (file: string): number => fs.statSync(file, { throwIfNoEntry: false })?.mtimeMs ?? 0
  // A file removed since the listing reads as unused and empty: removing it again is harmless.
  const indexes = names.filter(name => INDEX_NAME.test(name)).map(name => path.join(dir, name))
    .map(file => ({ file, used: Math.max(mtimeOf(file), mtimeOf(`${file}-wal`)), bytes: sizeOf(file) }))
  let total = indexes.reduce((sum, index) => sum + index.bytes, 0)
  const removed: string[] = []
  const candidates = indexes.filter(index => index.file !== keep && !fs.existsSync(`${index.file}.lock`)).sort((a, b) => a.used - b.used)
  for (const index of candidates) {
    const unused = now - index.used
    const why = unused > limits.maxAgeMs ? 'unused' : limits.maxBytes > 0 && total > limits.maxBytes ? 'over the size limit' : undefined
    if (why === undefined) continue
    removeIndexFile(index.file)
    total -= index.bytes
    removed.push(index.file)
    log.info({ file: index.file, bytes: index.bytes, unusedDays: Math.floor(unused / 86_400_000), reason: why }, `state folder: removed another roots' index (${why})`)
  }
  return removed
}
