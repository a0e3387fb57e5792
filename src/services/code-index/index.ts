import { availableParallelism } from 'node:os'
import { configuredRoots, type Config } from '../../config.js'
import type { Logger } from '../../logger.js'
import { createSymbolParser, locateTreeSitter, type TreeSitterLocation } from '../symbol-parser.js'
import type { WorkspaceService } from '../workspace.js'
import { createCodeIndex, type CodeIndex } from './code-index.js'
import { indexLocation, removeIndexFile } from './index-file.js'
import { loadSqlite, openIndexStore } from './index-store.js'

/** What the index is made with; each defaults to the installed package. */
export interface CodeIndexDependencies {
  sqlite?: ReturnType<typeof loadSqlite>
  treeSitter?: TreeSitterLocation | null
}

/**
 * The code index of the configured roots, or undefined (logged) when it is turned off or SQLite or the parser
 * is not installed — then find_symbol and search_code are not offered. Nothing is opened before start().
 */
export function codeIndexService (config: Pick<Config, 'codeIndex' | 'stateDir' | 'root' | 'roots'>, workspace: WorkspaceService, log: Logger, deps: CodeIndexDependencies = {}): CodeIndex | undefined {
  if (config.codeIndex === 'off') return undefined
  const sqlite = deps.sqlite === undefined ? loadSqlite() : deps.sqlite
  const treeSitter = deps.treeSitter === undefined ? locateTreeSitter() : deps.treeSitter
  if (sqlite === null || treeSitter === null) {
    log.warn(`${sqlite === null ? '@photostructure/sqlite' : 'web-tree-sitter'} is not installed or does not load here: find_symbol and search_code disabled`)
    return undefined
  }
  return createCodeIndex({
    workspace,
    // Threads of its own, one per core (at most 4): a whole-tree scan never queues in front of a get_symbols call.
    parsers: Array.from({ length: Math.min(4, availableParallelism()) }, () => createSymbolParser(treeSitter)),
    log,
    open: () => {
      const location = indexLocation(config.stateDir, configuredRoots(config), log)
      // A temporary index goes with the process, however it ends.
      if (location.temporary) process.once('exit', () => removeIndexFile(location.file))
      return { store: openIndexStore(sqlite, location.file), file: location.file }
    }
  })
}
