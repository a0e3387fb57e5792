import type { WorkspaceService } from './workspace.js'
import { compareText } from './compare-text.js'

/** Bounds of the did-you-mean scan, so a missing path never costs a full walk of a huge tree. */
const MAX_VISITED = 5000
const MAX_DEPTH = 8
const SKIP_DIRS = new Set(['node_modules', '.git'])

/** Edit distance (Levenshtein), two-row. */
export function editDistance (a: string, b: string): number {
  if (a === b) return 0
  let prev = Array.from({ length: b.length + 1 }, (_, i) => i)
  for (let i = 1; i <= a.length; i++) {
    const row = [i]
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1))
    }
    prev = row
  }
  return prev[b.length]
}

const stem = (name: string): string => name.replace(/\.[^.]*$/, '').toLowerCase()
const baseOf = (p: string): string => p.slice(p.lastIndexOf('/') + 1)

/**
 * Up to `limit` in-root paths that look like `wanted` (same stem, or a close base name), nearest first.
 * Scans breadth-first, skipping hidden and ignored directories, within fixed bounds.
 */
export async function suggestPaths (workspace: WorkspaceService, wanted: string, limit = 3): Promise<string[]> {
  const wantedBase = baseOf(wanted).toLowerCase()
  const wantedStem = stem(wantedBase)
  const threshold = Math.max(2, Math.floor(wantedBase.length / 3))
  const found: Array<{ path: string, score: number }> = []
  let queue = [{ relative: '.', fsPath: workspace.root as string | Buffer }]
  let visited = 0
  for (let depth = 0; depth < MAX_DEPTH && queue.length > 0 && visited < MAX_VISITED; depth++) {
    const next: typeof queue = []
    for (const dir of queue) {
      if (visited >= MAX_VISITED) break
      const entries = await workspace.readDirectory(dir).catch(() => [])
      for (const entry of entries) {
        if (++visited > MAX_VISITED) break
        const base = entry.name.toLowerCase()
        const close = stem(base) === wantedStem || editDistance(base, wantedBase) <= threshold
        if (close) found.push({ path: entry.relative + (entry.kind === 'dir' ? '/' : ''), score: editDistance(entry.relative.toLowerCase(), wanted.toLowerCase()) })
        if (entry.kind === 'dir' && !entry.name.startsWith('.') && !SKIP_DIRS.has(entry.name)) {
          if (!await workspace.isIgnoredEntry(dir.relative, entry.name, true)) next.push(entry)
        }
      }
    }
    queue = next
  }
  found.sort((a, b) => a.score - b.score || compareText(a.path, b.path))
  return found.slice(0, limit).map(f => f.path)
}
