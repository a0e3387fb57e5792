import { availableParallelism } from 'node:os'
import path from 'node:path'
import { configuredRoots, type Config } from '../../base/config.js'
import type { Logger } from '../../base/logger.js'
import { locateTreeSitter, type TreeSitterLocation } from '../symbols/index.js'
import type { Activity } from '../activity.js'
import type { WorkspaceService } from '../workspace/index.js'
import { createCodeIndex, type CodeIndex } from './code-index.js'
import { indexLocation, pruneStateDir, removeTemporaryIndex } from './index-file.js'
import { createEmbeddingProvider, embeddingsSettings, isLocalProvider } from './embeddings.js'
import { loadSqlite } from './index-schema.js'
import { createSemanticSearch, type SemanticSearch } from './semantic.js'

/** What the index is made with; each defaults to the installed package. */
export interface CodeIndexDependencies {
  sqlite?: ReturnType<typeof loadSqlite>
  /** How the SQLite binding is loaded when `sqlite` is not given (default: a require from its module). */
  requireSqlite?: (id: string) => unknown
  treeSitter?: TreeSitterLocation | null
  /** The server's running calls: the build yields to them. */
  activity?: Activity
}

/** How the index is built: parser threads (indexThreads, or one per core up to two) and the size limit, if any. */
export function buildSettingsOf (config: Pick<Config, 'indexThreads' | 'indexMaxMb'>, cores = availableParallelism()): { threads: number, maxBytes?: number } {
  return { threads: config.indexThreads > 0 ? config.indexThreads : Math.min(2, cores), ...(config.indexMaxMb > 0 ? { maxBytes: config.indexMaxMb * 1024 * 1024 } : {}) }
}

/**
 * The code index of the configured roots, or undefined (logged) when it is turned off or SQLite or the parser
 * is not installed — then find_symbol and search_code are not offered. Nothing is opened before start(). A
 * writing server first removes other roots' indexes the state folder no longer needs (stateMaxAgeDays,
 * stateMaxMb).
 */
export function codeIndexService (config: Pick<Config, 'codeIndex' | 'stateDir' | 'root' | 'roots' | 'indexMaxMb' | 'indexThreads' | 'stateMaxAgeDays' | 'stateMaxMb'>, workspace: WorkspaceService, log: Logger, deps: CodeIndexDependencies = {}): CodeIndex | undefined {
  if (config.codeIndex === 'off') return undefined
  let why: unknown
  const sqlite = deps.sqlite === undefined ? loadSqlite(deps.requireSqlite, (err) => { why = err }) : deps.sqlite
  const treeSitter = deps.treeSitter === undefined ? locateTreeSitter() : deps.treeSitter
  if (sqlite === null || treeSitter === null) {
    log.warn(why === undefined ? {} : { err: why }, `${sqlite === null ? '@photostructure/sqlite' : 'web-tree-sitter'} is not installed or does not load here: find_symbol and search_code disabled`)
    return undefined
  }
  const shared = config.codeIndex === 'shared'
  const location = indexLocation(config.stateDir, configuredRoots(config), log, { create: !shared })
  // A temporary index goes with the process, however it ends.
  if (location.temporary) process.once('exit', () => removeTemporaryIndex(location.file))
  else if (!shared) pruneStateDir(path.dirname(location.file), location.file, { maxAgeMs: config.stateMaxAgeDays * 86_400_000, maxBytes: config.stateMaxMb * 1024 * 1024 }, log)
  return createCodeIndex({
    workspace,
    // Threads of its own: a whole-tree scan never queues in front of a get_symbols call.
    treeSitter,
    ...buildSettingsOf(config),
    sqlite,
    file: location.file,
    log,
    mode: shared ? 'shared' : 'write',
    activity: deps.activity,
    watch: config.codeIndex === 'watch'
  })
}

/**
 * Semantic search over the code index, or undefined (search_semantic not offered) when no embeddings URL is
 * configured or there is no code index. Throws APP_ERR_CONFIG_INVALID for incomplete embeddings settings.
 */
export function semanticService (config: Parameters<typeof embeddingsSettings>[0] & Pick<Config, 'embeddingsMaxChunks'>, index: CodeIndex | undefined, workspace: WorkspaceService, log: Logger, env: NodeJS.ProcessEnv = process.env): SemanticSearch | undefined {
  const settings = embeddingsSettings(config, env)
  if (settings === undefined) return undefined
  if (index === undefined) {
    log.warn('search_semantic needs the code index (--code-index on, SQLite and tree-sitter installed): not offered')
    return undefined
  }
  // Said once at start, where an operator looks: with a provider elsewhere, the served code leaves this machine.
  const where = `${settings.url.origin}${settings.url.pathname}`
  if (isLocalProvider(settings.url)) log.info({ provider: where, model: settings.model }, 'search_semantic: embeddings from a provider on this machine')
  else log.warn({ provider: where, model: settings.model }, 'search_semantic: chunks of the served code are sent to this embeddings provider')
  return createSemanticSearch({ index, workspace, provider: createEmbeddingProvider(settings), log, maxChunks: config.embeddingsMaxChunks })
}
