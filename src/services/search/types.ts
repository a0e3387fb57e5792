import type { Logger } from '../../base/logger.js'
import type { SearchLine } from './parse.js'
import type { WorkspaceService } from '../workspace/index.js'
import type { Limiter } from '../limiter.js'

/** What a search returns: matching lines, matching files, or per-file counts. */
export type SearchMode = 'content' | 'files' | 'count'

/** One search, as the tool asks for it (paths unresolved: the service resolves them). */
export interface SearchRequest {
  pattern: string
  literal?: boolean
  ignoreCase?: boolean
  /** File or folder relative to the root; default the root. */
  path?: string
  /** Globs a file must match (ripgrep `-g`). */
  include?: string[]
  /** Globs that exclude files (ripgrep `-g !glob`). */
  exclude?: string[]
  /** Lines of context around each match (content mode). */
  contextLines?: number
  mode?: SearchMode
  /** Apply .gitignore/.ignore rules (default true); false searches ignored files too. */
  respectGitignore?: boolean
}

/** Matching files the ignore rules hid from a small result (found by a second, rule-free pass). */
export interface HiddenMatches {
  /** Matching files hidden by ignore rules (a lower bound when `lowerBound`). */
  files: number
  lowerBound: boolean
  /** The first hidden file, by path. */
  example: string
  /** The rule that hides it: `.gitignore:12` and the pattern. */
  rule?: { where: string, pattern: string }
}

/** One matching line on a page, with its context lines. */
export interface ContentItem {
  path: string
  /** The matching line. */
  hit: SearchLine
  /** Context lines around it (within context_lines), in line order, matches included. */
  context: SearchLine[]
}

/** One file on a files/count page. */
export interface FileItem {
  path: string
  /** Matching lines in the file (count mode; -1 in files mode). */
  count: number
}

/** One page of a (cached) sorted result set. */
export interface SearchPage {
  mode: SearchMode
  /** Content items (content mode), sorted by (path, line). */
  content: ContentItem[]
  /** File items (files/count mode), sorted by path. */
  files: FileItem[]
  /** Items in the whole result set: matching lines (content) or files (files/count). */
  total: number
  /** True when the set was cut short (deadline or cap): total is then a lower bound. */
  totalIsLowerBound: boolean
  /** Files with at least one match (a lower bound when totalIsLowerBound). */
  fileCount: number
  /** Sum of matching lines over all files (count mode; equals total in content mode). */
  lineCount: number
  /** Things the caller should tell the model: partial results, unreadable paths, caps. */
  notices: string[]
  /** True when the page came from the cache (no new ripgrep scan). */
  cached: boolean
  /** The resolved search path, relative to the root ('.' for the root). */
  path: string
  /** Set when ignore rules hid files that match (checked when a search finds fewer than 20 files). */
  hidden?: HiddenMatches
}

/** What get_workspace_info tells about ripgrep. */
export interface EngineInfo {
  /** ripgrep version, e.g. `15.0.0`. */
  version: string
  /** Where the binary came from: `@vscode/ripgrep`, `PATH` or `option`. */
  source: string
  /** Whether this build has PCRE2. */
  pcre2Available: boolean
}

/** Limits the search service enforces (shown by get_workspace_info). */
export interface SearchLimits {
  /** Wall-clock limit of one search before partial results are returned, ms. */
  timeoutMs: number
  /** Files kept in files/count mode before the set is cut (total becomes a lower bound). */
  maxFiles: number
  /** Largest file searched while walking a folder (a file named in `path` may be up to 100 MB). */
  maxFileSize: string
  /** How long a result set stays cached for pagination, ms. */
  cacheTtlMs: number
}

/** ripgrep-backed search: agent regexes only ever run inside ripgrep (linear time), never in V8. */
export interface SearchService {
  /** The engine: version, where the binary came from, and whether it has PCRE2 (unused: look-around stays unsupported). */
  engine(): Promise<EngineInfo>
  readonly limits: SearchLimits
  /** Runs (or reuses from the cache) a search and slices one page; throws tool errors for bad input. */
  search(request: SearchRequest, page: { offset: number, pageSize: number, signal?: AbortSignal }): Promise<SearchPage>
  /** The same engine and limits over another workspace (a session's narrowed roots), with a cache of its own; its ripgrep children are this service's too (activePids, close). */
  over(workspace: WorkspaceService): SearchService
  /** PIDs of ripgrep processes running now (tests check cancellation kills them). */
  activePids(): number[]
  /** A shutdown is near: every running search stops now, and its call answers with what was found, marked partial. */
  windDown(): void
  /** Kills running searches and drops the cache. */
  close(): void
}

/** Options of createSearch (tests shrink the limits). */
export interface CreateSearchOptions {
  workspace: WorkspaceService
  log: Logger
  rgPath?: string
  timeoutMs?: number
  maxFiles?: number
  cacheTtlMs?: number
  /** Bytes of lines one page may hold while its windows are read; past it the page is cut (tests shrink it). */
  maxPageBytes?: number
  /** Matches into a named file from which a page's window is sought instead of read from the start (tests shrink it). */
  seekFrom?: number
  /** Process-wide bound on ripgrep children (default: a limiter of its own). */
  limiter?: Limiter
  /** The clock a search's time is read from for its answer's notice (tests move it); default Date.now. */
  now?: () => number
}
