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

/** The index thread's memory for rescans, its watch's notices passed on (see RescanMemory); without a watch it never relies on anything. */
export function createRescanMemory (notices: Pick<FolderWatchOptions, 'onChange' | 'onFail'>, watched = true): RescanMemory {
  let walked: Set<string> | undefined
  let seen = new Map<string, Set<string>>()
  let watching = watched
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
  // Every file found, and what the index held of every file looked at: a file looked at twice (its folder listed,
  // then walked whole) counts once.
  const now = new Map<string, SourceEntry>()
  const before = new Map<string, IndexedFile>()
  const compare = (found: readonly SourceEntry[], held: readonly IndexedFile[]): void => {
    for (const file of found) now.set(file.fsPath, file)
    for (const file of held) before.set(file.path, file)
  }
  const dropFolders = (folder: string): void => {
    for (const known of [...folders]) if (known === folder || under(folder, known)) folders.delete(known)
  }
  /** A folder walked whole (new, or its name changed in its parent: it may be another folder now) against all the index holds below it. */
  const subtree = async (folder: string): Promise<void> => {
    const tree = await list(workspace, folder, 64, signal)
    dropFolders(folder)
    compare(tree?.files ?? [], index.filesUnder(folder))
    if (tree === undefined) return
    folders.add(folder)
    for (const sub of tree.folders) folders.add(sub)
  }
  for (const [folder, names] of changes) {
    // A folder an earlier one in this rescan found gone.
    if (!folders.has(folder)) continue
    const listed = await list(workspace, folder, 1, signal)
    if (listed === undefined) {
      await subtree(folder)
      continue
    }
    // The folder's own files: the walk's real paths put nothing but the name after the folder's.
    compare(listed.files, index.filesUnder(folder).filter(f => !f.path.includes('/', folder.length + 1)))
    const children = new Set(listed.folders)
    for (const known of [...folders]) {
      // A subfolder the last scan walked that is no longer listed: deleted, renamed away, or now ignored.
      if (under(folder, known) && !known.slice(folder.length + 1).includes('/') && !children.has(known)) await subtree(known)
    }
    for (const child of children) {
      if (!folders.has(child) || names.has(child.slice(folder.length + 1))) await subtree(child)
    }
  }
  let bytes = index.bytes
  const changed: ChangedFile[] = []
  for (const file of now.values()) {
    const held = before.get(file.fsPath)
    bytes += file.size - (held?.size ?? 0)
    if (held === undefined || held.size !== file.size || held.mtimeMs !== file.mtimeMs) changed.push({ relative: file.relative, fsPath: file.fsPath })
  }
  const gone = [...before.values()].filter(file => !now.has(file.path))
  for (const file of gone) bytes -= file.size
  return { changed, gone: gone.map(file => file.path), folders: [...folders], bytes }
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
    /* c8 ignore next */
    if (!isToolError(err)) throw err
    return undefined
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
