import type { Logger } from '../base/logger.js'
import { configuredRoots, type Config } from '../base/config.js'
import type { NextStep, ToolErrorCode } from '../base/errors.js'
import type { ToolCatalog } from './catalog.js'
import { systemClock, type Clock } from './clock.js'
import { createWorkspace, type WorkspaceService, createWorkspaceSet, createPdfReader } from './workspace/index.js'
import { createSearch, type SearchService } from './search/index.js'
import { createTokenizer, type Tokenizer } from './tokenizer/index.js'
import { createLimiter, type Limiter } from './limiter.js'
import { createActivity, type Activity } from './activity.js'
import { createDegradations, type Degradations } from './degradations.js'
import { withoutServerPaths } from './server-paths.js'
import { createGit, gitRepositories, type GitRepositories } from './git/index.js'
import { symbolParser, type SymbolParser } from './symbols/index.js'
import { codeIndexService, semanticService, type SemanticSearch, type CodeIndex } from './code-index/index.js'

/**
 * Every injectable service; a tool whose service is absent is neither listed nor callable. Layers above
 * add theirs by declaration merging (guide/usage-guide.ts adds `guide`), so this layer imports none of them.
 */
export interface Services {
  workspace?: WorkspaceService
  search?: SearchService
  /** The roots' git repositories, read-only; absent without git or when no root is a repository. */
  git?: GitRepositories
  tokenizer?: Tokenizer
  /** Source outlines by tree-sitter (a worker thread); absent when web-tree-sitter or its grammars are not installed. */
  symbols?: SymbolParser
  /** The symbol and chunk index (find_symbol, search_code); absent when turned off or SQLite is not installed. */
  codeIndex?: CodeIndex
  /** Search by meaning over the code index (search_semantic); absent unless an embeddings provider is configured. */
  semantic?: SemanticSearch
  clock?: Clock
  /** Filled in by the registry itself: the live tool list, for the guide tools. */
  catalog?: ToolCatalog
  /** The process-wide bound on expensive work (its stats feed /metrics). */
  limiter?: Limiter
  /** Calls running now: the code index's build yields to them. */
  activity?: Activity
  /** Where parts that keep serving in a reduced way say so (logged once, listed by /readyz, counted in /metrics). */
  degradations?: Degradations
  /** Why a service this configuration or machine lacks is not there, for the tools that would need it. */
  absent?: Partial<Record<ServiceName, Absence>>
}

/** Why a service is not there: the code a call of a tool that needs it answers, the reason, what to do instead. */
export interface Absence {
  code: ToolErrorCode
  /** A sentence part, e.g. "the code index is turned off (--code-index off)". */
  reason: string
  step: NextStep
}

/** Name of an injectable service. */
export type ServiceName = keyof Services

/** The services createServices always builds (search is absent only without ripgrep). */
export type ProductionServices = Services & Required<Pick<Services, 'workspace' | 'tokenizer' | 'clock' | 'limiter' | 'degradations'>>

/** Creates the production services for a config; closeServices ends the threads, index and processes they hold. */
export async function createServices (config: Config, log: Logger): Promise<ProductionServices> {
  const queue = config.maxQueuedWork
  const limiter = createLimiter({
    search: { concurrency: config.maxSearches, queue },
    walk: { concurrency: config.maxWalks, queue },
    read: { concurrency: config.maxLargeReads, queue }
  })
  const degradations = createDegradations(log)
  const roots = configuredRoots(config)
  const pdf = createPdfReader()
  // Each root is its own jail; with several, each one's paths carry its `name:`.
  const members = await Promise.all(roots.map(async r => await createWorkspace({
    root: r.path, name: r.name, prefixed: roots.length > 1, log, limiter, pdf, allowHardLinks: config.allowHardLinks
  })))
  const workspace = createWorkspaceSet(members, limiter)
  const tokenizer = createTokenizer({ workers: config.tokenizerWorkers, degradations })
  // Without ripgrep (or git, or a repository) those tools are simply not offered; the rest still serves.
  // Both probes spawn a child: started together, start-up waits for the slower one, not for both.
  const [search, git] = await Promise.all([
    createSearch({ workspace, log, limiter, ...(config.ripgrepPath === '' ? {} : { rgPath: config.ripgrepPath }) }).catch((err: unknown) => {
      log.warn({ err }, 'ripgrep not available: search tools disabled')
      return undefined
    }),
    Promise.all(members.map(async m => ({ name: m.roots[0].name, git: await createGit({ root: m.root, servedRoots: roots.map(r => r.path), log, limiter }) }))).then(gitRepositories)
  ])
  if (typeof git === 'string') log.info({ reason: git }, 'git history tools disabled')
  const activity = createActivity()
  const codeIndex = codeIndexService(config, workspace, log, { activity })
  const semantic = semanticService(config, codeIndex, workspace, log)
  const symbols = symbolParser(log)
  const absent: Partial<Record<ServiceName, Absence>> = {}
  if (search === undefined) absent.search = { code: 'RIPGREP_NOT_FOUND', reason: 'ripgrep could not be started here (the operator can install @vscode/ripgrep or set --ripgrep-path)', step: 'list-and-read' }
  // The reason reaches tool answers: the roots by name, git's own path and any other server path hidden (the log line above has them).
  if (typeof git === 'string') absent.git = { code: /^git is not installed|does not run|too old/.test(git) ? 'GIT_NOT_FOUND' : 'NOT_A_REPOSITORY', reason: withoutServerPaths(git, roots.map(r => [r.path, roots.length > 1 ? `${r.name}:` : '.'])), step: 'read-without-history' }
  if (codeIndex === undefined) {
    absent.codeIndex = config.codeIndex === 'off'
      ? { code: 'CODE_INDEX_OFF', reason: 'the code index is turned off (--code-index off; the operator can set --code-index on)', step: 'grep-for-definitions' }
      : { code: 'INDEX_UNAVAILABLE', reason: 'SQLite or tree-sitter does not load on this machine', step: 'grep-for-definitions' }
  }
  if (symbols === undefined) absent.symbols = { code: 'PARSER_NOT_INSTALLED', reason: 'web-tree-sitter or its grammars are not installed here', step: 'grep-for-definitions' }
  return { workspace, search, git: typeof git === 'string' ? undefined : git, tokenizer, symbols, codeIndex, semantic, clock: systemClock, limiter, activity, degradations, absent }
}

/**
 * Ends what the services hold: the code index (its thread, lease and reader), the vector thread, the token
 * counting, parsing and PDF threads, and any ripgrep still running. A closed service starts nothing again on its
 * own; idempotent.
 */
export async function closeServices (services: Services): Promise<void> {
  const { semantic, codeIndex, tokenizer, symbols, workspace, search } = services
  search?.close()
  await Promise.allSettled([semantic?.close(), codeIndex?.close(), tokenizer?.close(), symbols?.close(), workspace?.pdf.close()])
}
