import pino from 'pino'
import { syncFs, createWorkspace, type WorkspaceRoot, type WorkspaceService, createWorkspaceSet } from '../workspace/index.js'
import { createLimiter } from '../limiter.js'
import { MAX_SOURCE_BYTES, symbolLanguageOf } from '../symbols/index.js'
import type { IndexedFile } from './index-schema.js'
import { startThread, threadModule } from '../threads/index.js'

/** Most files one scan looks at, shared by its lanes (each walk stops at its share: the first ones in walk order). */
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
  /** Every folder the walk went through (roots included): what a watcher watches. */
  folders: string[]
  /** Bytes of source the tree holds (what the index's size follows). */
  bytes: number
}

/** What one lane's walk found. */
export interface LaneFound {
  files: SourceEntry[]
  folders: string[]
}

/** A source file as a walk found it. */
export interface SourceEntry extends ChangedFile {
  size: number
  mtimeMs: number
}

/** What the index holds, as a scan compares with it: how many files (cheap), and the files (read when needed). */
export interface IndexedSet {
  size: number
  files: () => readonly IndexedFile[]
}

/** One of the walks a scan is split into: number `lane` of `lanes`. */
export interface ScanLane {
  lane: number
  lanes: number
}

/** Walks the rest of the tree in another thread (see laneThread); rejects when that thread cannot. */
export type LaneWalker = (lane: ScanLane) => Promise<LaneFound>

/** Below this many indexed files one walk does it all: a second thread costs more than it saves. */
export const LANES_FROM = 5_000

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

/** FNV-1a of a path: deals folders out to lanes the same way on every scan. */
function hashOf (text: string): number {
  let hash = 0x811c9dc5
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193)
  return hash >>> 0
}

/**
 * The source files of one lane: hidden and ignored entries left out as list_directory leaves them out, names of
 * other languages never lstat'd. Folders two levels below a root are dealt out to the lanes by a hash of their
 * path; every lane lists the few folders above them, and the files up there are lane 0's.
 */
export async function walkSources (workspace: WorkspaceService, lane: ScanLane, signal?: AbortSignal): Promise<LaneFound> {
  const top = await workspace.resolve('.', { signal })
  // With several roots the top lists the roots themselves: the split is one level deeper.
  const split = workspace.roots.length > 1 ? 3 : 2
  const walked = await workspace.walk({
    start: top,
    maxDepth: 64,
    includeHidden: false,
    respectGitignore: true,
    maxEntries: Math.floor(MAX_INDEXED_FILES / lane.lanes),
    keepDir: (relative, depth) => depth !== split || hashOf(relative) % lane.lanes === lane.lane,
    keepEntry: (entry, depth) => symbolLanguageOf(entry.name) !== undefined && (depth > split || lane.lane === 0),
    signal
  })
  // A walk cut short by the signal returns what it saw: that is not the tree, so nothing may be removed for it.
  signal?.throwIfAborted()
  const found: LaneFound = { files: [], folders: workspace.roots.map(r => r.path) }
  for (const e of walked.entries) {
    // A name that is not UTF-8 has no stable text key; such files (and folders) stay out of the index.
    if (typeof e.fsPath !== 'string') continue
    if (e.kind === 'dir') found.folders.push(e.fsPath)
    else if (e.kind === 'file' && e.size <= MAX_SOURCE_BYTES) found.files.push({ relative: e.relative, fsPath: e.fsPath, size: e.size, mtimeMs: e.mtimeMs })
  }
  return found
}

/**
 * Walks the roots (in two lanes at once when the index is big and `other` can take the second) and compares
 * each source file with what is indexed by size and mtime.
 */
export async function scanTree (workspace: WorkspaceService, index: IndexedSet, other?: LaneWalker, signal?: AbortSignal): Promise<ScanResult> {
  const lanes = other !== undefined && index.size >= LANES_FROM ? 2 : 1
  // The other lane starts first (a thread takes a while to start): this thread's own work keeps it busy until done.
  const second = lanes === 2 ? (other as LaneWalker)({ lane: 1, lanes }).catch(async () => await walkSources(workspace, { lane: 1, lanes }, signal)) : undefined
  const known = new Map(index.files().map(f => [f.path, f]))
  const found = await walkSources(workspace, { lane: 0, lanes }, signal)
  if (second !== undefined) {
    const other = await second
    found.files.push(...other.files)
    found.folders.push(...other.folders)
  }
  const changed: ChangedFile[] = []
  let bytes = 0
  for (const entry of found.files) {
    bytes += entry.size
    const before = known.get(entry.fsPath)
    // What is left in `known` at the end was not seen: gone.
    known.delete(entry.fsPath)
    if (before === undefined || before.size !== entry.size || before.mtimeMs !== entry.mtimeMs) changed.push({ relative: entry.relative, fsPath: entry.fsPath })
  }
  // The folders above the split were walked by every lane.
  return { changed, gone: [...known.keys()], folders: [...new Set(found.folders)], bytes }
}

/**
 * A lane walked by a thread of its own (the `lane-worker` module unless `url`, at `niceness` when set), started
 * for the one walk and ended after it.
 */
export function laneThread (roots: readonly WorkspaceRoot[], options: { url?: URL, niceness?: number } = {}): LaneWalker {
  const url = options.url ?? threadModule('lane-worker', import.meta.url)
  return async (lane) => {
    const thread = startThread(url, { name: 'lane-worker', data: { roots }, niceness: options.niceness })
    try {
      return (await thread.request<{ found: LaneFound }>(lane)).found
    } finally {
      await thread.terminate()
    }
  }
}
