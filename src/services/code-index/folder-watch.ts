import { watch as fsWatch, type FSWatcher } from 'node:fs'

/** Watches a set of folders (not recursively: the set is what a scan walked) and says when one changed. */
export interface FolderWatch {
  /** Watches exactly these folders from now on (new ones added, those gone from the set dropped). */
  update(folders: Iterable<string>): void
  /** How many folders are watched. */
  size(): number
  close(): void
}

/** What createFolderWatch needs. */
export interface FolderWatchOptions {
  /** Called once a burst of changes has been quiet for `quietMs`, with the names that changed in each folder ('' where the system did not say). */
  onChange: (changes: Map<string, Set<string>>) => void
  /** Called once when watching is given up (too many folders, the system's watch limit): scans then run on demand only. */
  onFail: (why: string) => void
  quietMs?: number
  /** Most folders watched; a bigger tree is not watched at all. */
  maxFolders?: number
  /** The fs.watch to use (tests inject failures). */
  watch?: (folder: string, listener: (event: string, name: string | Buffer | null) => void) => FSWatcher
}

/** A folder that went away is dropped by the next scan; these are the errors that say the system will not watch more. */
const LIMIT_ERRORS = new Set(['ENOSPC', 'EMFILE', 'ENFILE'])

/**
 * A watcher per folder (one inotify watch each on Linux), so only folders the index walks — never an ignored
 * node_modules or a hidden folder — are watched. Changes are gathered until quiet, then reported once.
 */
export function createFolderWatch (options: FolderWatchOptions): FolderWatch {
  const quietMs = options.quietMs ?? 500
  const maxFolders = options.maxFolders ?? 50_000
  const watch = options.watch ?? ((folder, listener) => fsWatch(folder, { persistent: false }, listener))
  const watchers = new Map<string, FSWatcher>()
  let timer: NodeJS.Timeout | undefined
  let failed = false
  let changes = new Map<string, Set<string>>()

  const report = (): void => {
    const reported = changes
    changes = new Map()
    options.onChange(reported)
  }
  const changed = (folder: string, name: string | Buffer | null): void => {
    let names = changes.get(folder)
    if (names === undefined) changes.set(folder, names = new Set())
    // A name that is not UTF-8 cannot be told apart from another: as good as none.
    names.add(typeof name === 'string' ? name : '')
    clearTimeout(timer)
    timer = setTimeout(report, quietMs)
    timer.unref()
  }

  function fail (why: string): void {
    failed = true
    close()
    options.onFail(why)
  }

  function close (): void {
    clearTimeout(timer)
    for (const watcher of watchers.values()) watcher.close()
    watchers.clear()
  }

  return {
    update (folders) {
      if (failed) return
      const wanted = new Set(folders)
      if (wanted.size > maxFolders) {
        fail(`${wanted.size} folders are more than the ${maxFolders} watched at most`)
        return
      }
      for (const [folder, watcher] of watchers) {
        if (wanted.has(folder)) continue
        watcher.close()
        watchers.delete(folder)
      }
      for (const folder of wanted) {
        if (watchers.has(folder)) continue
        try {
          const watcher = watch(folder, (_event, name) => changed(folder, name))
          // A watched folder removed later reports an error on some systems: the next scan drops it.
          watcher.on('error', () => { watcher.close(); watchers.delete(folder) })
          watchers.set(folder, watcher)
        } catch (err) {
          const code = (err as NodeJS.ErrnoException).code
          if (code !== undefined && LIMIT_ERRORS.has(code)) {
            fail(`the system refused more watches (${code}) after ${watchers.size} folders`)
            return
          }
          // Gone since the walk: the change it is part of reaches the parent's watcher.
        }
      }
    },
    size: () => watchers.size,
    close
  }
}
