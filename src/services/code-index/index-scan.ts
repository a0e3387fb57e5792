import pino from 'pino'
import { syncFs } from '../fs-ops.js'
import { createLimiter } from '../limiter.js'
import { MAX_SOURCE_BYTES, symbolLanguageOf } from '../symbol-languages.js'
import { createWorkspace, type WorkspaceRoot, type WorkspaceService } from '../workspace.js'
import { createWorkspaceSet } from '../workspace-set.js'
import type { IndexedFile } from './index-store.js'

/** Most files one scan looks at (the walk stops there; the index then covers the first ones in walk order). */
export const MAX_INDEXED_FILES = 500_000

/** A source file the scan found new or changed. */
export interface ChangedFile {
  relative: string
  fsPath: string
}

/** What a scan found, against what the index holds. */
export interface ScanResult {
  changed: ChangedFile[]
  /** Indexed paths no longer in the tree (or now hidden by the rules). */
  gone: string[]
}

/**
 * The served roots again, for the index thread's walk: the same jail, rule files and walk as every tool's, over
 * the synchronous calls (the thread serves no requests, and each call costs a third of a promise one).
 */
export async function scanWorkspace (roots: readonly WorkspaceRoot[]): Promise<WorkspaceService> {
  const log = pino({ level: 'silent' })
  const limiter = createLimiter()
  const members = await Promise.all(roots.map(async r => await createWorkspace({ root: r.path, name: r.name, prefixed: roots.length > 1, log, limiter, listing: syncFs })))
  return createWorkspaceSet(members, limiter)
}

/**
 * Walks the roots as list_directory shows them (hidden files and ignored ones left out), keeping source files
 * only — a Makefile or a README costs no lstat — and compares each with what is indexed by size and mtime.
 */
export async function scanTree (workspace: WorkspaceService, indexed: readonly IndexedFile[], signal?: AbortSignal): Promise<ScanResult> {
  const top = await workspace.resolve('.', { signal })
  const walked = await workspace.walk({ start: top, maxDepth: 64, includeHidden: false, respectGitignore: true, maxEntries: MAX_INDEXED_FILES, keepEntry: entry => symbolLanguageOf(entry.name) !== undefined, signal })
  // A walk cut short by the signal returns what it saw: that is not the tree, so nothing may be removed for it.
  signal?.throwIfAborted()
  const known = new Map(indexed.map(f => [f.path, f]))
  const seen = new Set<string>()
  const changed: ChangedFile[] = []
  for (const entry of walked.entries) {
    // A name that is not UTF-8 has no stable text key; such files stay out of the index.
    if (entry.kind !== 'file' || typeof entry.fsPath !== 'string' || entry.size > MAX_SOURCE_BYTES) continue
    seen.add(entry.fsPath)
    const before = known.get(entry.fsPath)
    if (before === undefined || before.size !== entry.size || before.mtimeMs !== entry.mtimeMs) changed.push({ relative: entry.relative, fsPath: entry.fsPath })
  }
  return { changed, gone: [...known.keys()].filter(path => !seen.has(path)) }
}
