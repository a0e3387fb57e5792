import { createHash } from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import type { Logger } from '../../logger.js'
import type { RootSpec } from '../../config.js'

/** Where an index lives, and whether it is a temporary file to remove at exit. */
export interface IndexLocation {
  file: string
  temporary: boolean
}

/** The state folder by default: $XDG_STATE_HOME/workspace-mcp, else ~/.local/state/workspace-mcp. */
export function defaultStateDir (env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_STATE_HOME !== undefined && path.isAbsolute(env.XDG_STATE_HOME) ? env.XDG_STATE_HOME : path.join(os.homedir(), '.local', 'state')
  return path.join(base, 'workspace-mcp')
}

/**
 * The index file of a set of roots: `index-<hash>.sqlite` in the state folder (created private to this user),
 * the hash taken over the roots' names and paths so another set never shares it. When the folder cannot be
 * made or written, a file in the system's temporary folder instead (the index then lasts one run).
 */
export function indexLocation (stateDir: string, roots: readonly RootSpec[], log: Logger): IndexLocation {
  const key = createHash('sha256').update(roots.map(r => `${r.name}=${r.path}`).join('\n')).digest('hex').slice(0, 16)
  const dir = stateDir === '' ? defaultStateDir() : path.resolve(stateDir)
  try {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 })
    fs.accessSync(dir, fs.constants.W_OK)
    return { file: path.join(dir, `index-${key}.sqlite`), temporary: false }
  } catch (err) {
    log.warn({ err, stateDir: dir }, 'state folder not writable: the code index lasts this run only')
    return { file: path.join(os.tmpdir(), `workspace-mcp-index-${key}-${process.pid}.sqlite`), temporary: true }
  }
}

/** Removes an index file and its WAL companions (a temporary index at exit). */
export function removeIndexFile (file: string): void {
  for (const suffix of ['', '-wal', '-shm']) fs.rmSync(`${file}${suffix}`, { force: true })
}
