import { isToolError } from '../../base/errors.js'
import { MAX_SOURCE_BYTES, symbolLanguageOf } from '../symbols/index.js'
import { IGNORE_FILES, type WorkspaceService } from '../workspace/index.js'
import type { FolderWatchOptions } from './folder-watch.js'
import type { IndexedFile } from './index-schema.js'
import { MAX_INDEXED_FILES, type ChangedFile, type ScanResult, type SourceEntry } from './index-scan.js'

/** Most folders one rescan lists; more changed at once (a checkout, a build) and the whole tree is scanned. */
export const MAX_RESCANNED_FOLDERS = 256

/** The names a watch saw change, by folder ('' where the system did not say which). */
export type FolderChanges = ReadonlyMap<string, ReadonlySet<string>>

/** What the index holds, as a rescan asks for it. */
export interface IndexedTree {
  /** The indexed files anywhere below `folder`. */
  filesUnder: (folder: string) => IndexedFile[]
  /** Bytes of source the tree held at the last scan. */
  bytes: number
}

/**
 * Whether the changes can be rescanned folder by folder: few enough folders, every name known, no ignore file among
 * them (a rule file changes what is hidden anywhere below it), and every folder one the last scan walked.
 */
export function rescannable (changes: FolderChanges, walked: ReadonlySet<string>): boolean {
  if (changes.size === 0 || changes.size > MAX_RESCANNED_FOLDERS) return false
  for (const [folder, names] of changes) {
    if (!walked.has(folder)) return false
    for (const name of names) if (name === '' || (IGNORE_FILES as readonly string[]).includes(name)) return false
  }
  return true
}

/** What a scan may rely on: the changes the watch saw since the last scan began, and the folders that scan walked (unset: walk the whole tree). */
export interface RescanMemory {
  /** The folder watch's callbacks: changes remembered, a watch given up forgets the walked folders for good. */
  watch: Pick<FolderWatchOptions, 'onChange' | 'onFail'>
  /** What the next scan may rely on, taken (a scan that fails leaves nothing behind: the one after walks the whole tree). */
  take: () => { changes: FolderChanges, walked: ReadonlySet<string> | undefined }
  /** A scan finished, having walked these folders. */
  scanned: (folders: Iterable<string>) => void
  /** Another file took the index's place: what was walked says nothing of it. */
  forget: () => void
}

/** The index thread's memory for rescans, its watch's notices passed on (see RescanMemory). */
export function createRescanMemory (notices: Pick<FolderWatchOptions, 'onChange' | 'onFail'>): RescanMemory {
  let walked: Set<string> | undefined
  let seen = new Map<string, Set<string>>()
  let watching = true
  return {
    watch: {
      onChange: (changes) => {
        for (const [folder, names] of changes) seen.set(folder, new Set([...seen.get(folder) ?? [], ...names]))
        notices.onChange(changes)
      },
      onFail: (why) => {
        watching = false
        walked = undefined
        notices.onFail(why)
      }
    },
    take () {
      const taken = { changes: seen, walked }
      seen = new Map()
      walked = undefined
      return taken
    },
    scanned (folders) {
      if (watching) walked = new Set(folders)
    },
    forget () {
      walked = undefined
    }
  }
}

/** `folder` and everything below it, as the walk's real paths spell them. */
const under = (folder: string, path: string): boolean => path.startsWith(`${folder}/`)

/**
 * Rescans only the folders a watch saw change (see rescannable): each is listed one level through the root jail,
 * its source files compared with what the index holds of it by size and mtime; a new subfolder is walked whole, and
 * a subfolder gone (or the folder itself) takes its indexed files with it.
 */
export async function scanFolders (workspace: WorkspaceService, changes: FolderChanges, walked: ReadonlySet<string>, index: IndexedTree, signal?: AbortSignal): Promise<ScanResult> {
  const folders = new Set(walked)
  const changed: ChangedFile[] = []
  const gone = new Map<string, number>()
  let bytes = index.bytes
  const forget = (folder: string): void => {
    for (const file of index.filesUnder(folder)) gone.set(file.path, file.size)
    for (const known of [...folders]) if (known === folder || under(folder, known)) folders.delete(known)
  }
  for (const folder of changes.keys()) {
    // A folder an earlier one in this rescan found gone.
    if (!folders.has(folder)) continue
    const listed = await list(workspace, folder, 1, signal)
    if (listed === undefined) {
      forget(folder)
      continue
    }
    // The folder's own files: the walk's real paths put nothing but the name after the folder's.
    const known = new Map(index.filesUnder(folder).filter(f => !f.path.includes('/', folder.length + 1)).map(f => [f.path, f]))
    for (const file of listed.files) {
      const before = known.get(file.fsPath)
      known.delete(file.fsPath)
      bytes += file.size - (before?.size ?? 0)
      if (before === undefined || before.size !== file.size || before.mtimeMs !== file.mtimeMs) changed.push({ relative: file.relative, fsPath: file.fsPath })
    }
    for (const file of known.values()) gone.set(file.path, file.size)
    const children = new Set(listed.folders)
    for (const known of [...folders]) {
      // A subfolder the last scan walked that is no longer listed: deleted, renamed away, or now ignored.
      if (under(folder, known) && !known.slice(folder.length + 1).includes('/') && !children.has(known)) forget(known)
    }
    for (const child of children) {
      if (folders.has(child)) continue
      // New (or renamed here): walked whole, every file in it new to the index.
      const tree = await list(workspace, child, 64, signal)
      if (tree === undefined) continue
      folders.add(child)
      for (const sub of tree.folders) folders.add(sub)
      for (const file of tree.files) {
        bytes += file.size
        changed.push({ relative: file.relative, fsPath: file.fsPath })
      }
    }
  }
  for (const size of gone.values()) bytes -= size
  return { changed, gone: [...gone.keys()], folders: [...folders], bytes }
}

/** The source files and folders below `folder` (to `depth` levels), or undefined when it is no longer there to walk. */
async function list (workspace: WorkspaceService, folder: string, depth: number, signal?: AbortSignal): Promise<{ files: SourceEntry[], folders: string[] } | undefined> {
  let walked
  try {
    const start = await workspace.resolve(workspace.lexical(folder).relative, { signal })
    walked = await workspace.walk({ start, maxDepth: depth, includeHidden: false, respectGitignore: true, maxEntries: MAX_INDEXED_FILES, keepEntry: entry => symbolLanguageOf(entry.name) !== undefined, signal })
  } catch (err) {
    // Gone, no longer a folder, or now behind a link out of the root: nothing of it is indexed. Anything but a
    // tool error is a bug for the scan to fail with.
    if (isToolError(err)) return undefined
    /* c8 ignore next */
    throw err
  }
  signal?.throwIfAborted()
  const found = { files: [] as SourceEntry[], folders: [] as string[] }
  for (const e of walked.entries) {
    if (typeof e.fsPath !== 'string') continue
    if (e.kind === 'dir') found.folders.push(e.fsPath)
    else if (e.kind === 'file' && e.size <= MAX_SOURCE_BYTES) found.files.push({ relative: e.relative, fsPath: e.fsPath, size: e.size, mtimeMs: e.mtimeMs })
  }
  return found
}
