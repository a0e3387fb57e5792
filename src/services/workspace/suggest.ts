import type { WorkspaceService } from './types.js'
import { compareText } from '../compare-text.js'
import { editDistance } from '../edit-distance.js'
import type { DirEntry } from './entry-types.js'

/** Bounds of the did-you-mean scan: a missing path never costs a full walk of a huge tree, nor much CPU. */
const MAX_VISITED = 5000
const MAX_DEPTH = 8
/** Longer base names get no suggestions (a typo in a 250-character name is not what did-you-mean is for). */
const MAX_NAME_CHARS = 128
/** Work budget of one scan, ms of wall time (the walk awaits I/O, so it also yields). */
const MAX_SCAN_MS = 150
/** Close names kept for ranking (each costs one bounded whole-path comparison). */
const MAX_CANDIDATES = 64
const SKIP_DIRS = new Set(['node_modules', '.git'])

const stem = (name: string): string => name.replace(/\.[^.]*$/, '').toLowerCase()
const baseOf = (p: string): string => p.slice(p.lastIndexOf('/') + 1)

/** A close name found by the scan. */
interface Candidate {
  path: string
  /** In the folder the wanted path names. */
  sibling: boolean
  /** Edit distance of the whole paths. */
  score: number
}

/** Options of suggestPaths. */
export interface SuggestOptions {
  limit?: number
  /** The call's signal: an aborted call stops scanning at once. */
  signal?: AbortSignal
}

/**
 * Up to `limit` in-root paths that look like `wanted` (same stem, or a close base name), nearest first.
 * Scans breadth-first from the root, skipping hidden and ignored directories, within fixed bounds
 * (entries, depth, name length, time). Only ever names entries inside the root.
 */
export async function suggestPaths (workspace: WorkspaceService, wanted: string, options: SuggestOptions = {}): Promise<string[]> {
  const { limit = 3, signal } = options
  const wantedBase = baseOf(wanted).toLowerCase()
  if (wantedBase.length === 0 || wantedBase.length > MAX_NAME_CHARS) return []
  const wantedStem = stem(wantedBase)
  const threshold = Math.max(2, Math.floor(wantedBase.length / 3))
  const found: Candidate[] = []
  const seen = new Set<string>()
  let visited = 0
  const stopAt = performance.now() + MAX_SCAN_MS
  const over = (): boolean => visited >= MAX_VISITED || signal?.aborted === true || performance.now() > stopAt
  const consider = (entry: DirEntry, sibling: boolean): void => {
    const base = entry.name.toLowerCase()
    const close = stem(base) === wantedStem || editDistance(base, wantedBase, threshold) <= threshold
    const path = entry.relative + (entry.kind === 'dir' ? '/' : '')
    if (close && found.length < MAX_CANDIDATES && !seen.has(path)) {
      seen.add(path)
      found.push({ path, sibling, score: 0 })
    }
  }

  // The folder the caller named is read first, so its entries are candidates however big the tree is.
  const parent = wanted.includes('/') ? wanted.slice(0, wanted.lastIndexOf('/')) : ''
  if (parent !== '') {
    const dir = await workspace.resolve(parent, { mustExist: false, signal }).catch(() => undefined)
    const entries = dir === undefined ? [] : await workspace.readDirectory(dir).catch(() => [])
    for (const entry of entries.slice(0, MAX_VISITED)) consider(entry, true)
  }

  let queue = [{ relative: '.', fsPath: workspace.root as string | Buffer }]
  for (let depth = 0; depth < MAX_DEPTH && queue.length > 0 && !over(); depth++) {
    const next: typeof queue = []
    for (const dir of queue) {
      if (over()) break
      const entries = await workspace.readDirectory(dir).catch(() => [])
      for (const entry of entries) {
        if (++visited > MAX_VISITED) break
        consider(entry, false)
        if (entry.kind === 'dir' && !entry.name.startsWith('.') && !SKIP_DIRS.has(entry.name)) {
          if (!await workspace.isIgnoredEntry(dir.relative, entry.name, true)) next.push(entry)
        }
      }
    }
    queue = next
  }
  // Siblings of the wanted name first, then by whole-path distance (capped in length, and only of the
  // few close names).
  const target = wanted.toLowerCase().slice(0, 2 * MAX_NAME_CHARS)
  for (const f of found) f.score = editDistance(f.path.toLowerCase().slice(0, 2 * MAX_NAME_CHARS), target)
  found.sort((a, b) => Number(b.sibling) - Number(a.sibling) || a.score - b.score || compareText(a.path, b.path))
  return found.slice(0, limit).map(f => f.path)
}
