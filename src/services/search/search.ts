import { availableParallelism } from 'node:os'
import type { ContentItem, CreateSearchOptions, EngineInfo, FileItem, HiddenMatches, SearchLimits, SearchRequest, SearchService } from './types.js'
import { createLimiter, type Limiter } from '../limiter.js'
import { createResultCache } from './result-cache.js'
import type { SearchLine } from './parse.js'
import { locateRg, probeRg } from './locate.js'
import { runRg } from './rg.js'
import { renice, SHARED_NICENESS } from './priority.js'
import { probeHidden, searchContent, searchFiles } from './passes.js'
import type { Pass, PassContext } from './pass-context.js'
import { dropFiles, mergeSets, noticesOf, weightOf, type FileWindow, type PageCut, type ResultSet, type WindowWant } from './set.js'
import { toolError } from '../../base/errors.js'
import { pinTarget, type SearchTarget } from './target.js'
import { recheckFiles } from './recheck.js'
import { slowSearchNotice } from './inspect.js'
import type { PinnedPath, WorkspacePart } from '../workspace/index.js'

export { MAX_LINE_CHARS, type SearchLine } from './parse.js'
export type { ContentItem, CreateSearchOptions, EngineInfo, FileItem, HiddenMatches, SearchLimits, SearchMode, SearchPage, SearchRequest, SearchService } from './types.js'

const MAX_FILE_SIZE = '10M'
/** A search finding fewer files than this also looks for matches the ignore rules hid (a near-empty answer is where a hidden tree misleads). */
const PROBE_HIDDEN_BELOW = 20
/** Rounds of re-checking one page (each drops the failing files and slices again). */
const MAX_RECHECK_ROUNDS = 8
/** Bytes of lines one page may hold while it is read (100 matches with 10 lines of context each at 2,000 chars take ~8.5 MB). */
const MAX_PAGE_BYTES = 16 * 1024 * 1024
/** Matches into a named file from which a page's window is sought (a plain run, then stdin from there): below, reading ripgrep's JSON from the start costs less than the extra run. */
const SEEK_FROM = 5000

const CORES = availableParallelism()

/** What a page's cut is measured against. */
interface PageLimits { timeoutMs: number, pageBytes: number }

/** When one search's first ripgrep got its slot (the service's clock) and its deadline (Date.now()). */
interface SearchClock { started?: number, deadline?: number }

/** Why a page was cut short, in words (its notice). */
const CUT_REASONS: Record<PageCut, (limits: PageLimits) => string> = {
  deadline: ({ timeoutMs }) => `reading its lines took longer than ${Math.round(timeoutMs / 1000)} s (a page deep in a file with many matches is read from the file's start)`,
  shutdown: () => 'the server is shutting down',
  budget: ({ pageBytes }) => `its lines would have taken more than the ${pageBytes / 1024 / 1024} MB a page may hold`
}

/** The error of a page cut before its first result (a budget cut keeps at least one, so it has none). */
const CUT_ERRORS: Record<Exclude<PageCut, 'budget'>, (limits: PageLimits) => Error> = {
  deadline: (limits) => toolError('TIMEOUT', `the lines of this page could not be read: ${CUT_REASONS.deadline(limits)}`,
    'call again with a smaller offset, or narrow path or include (the count is cached: only the page is read again)'),
  shutdown: (limits) => toolError('SHUTTING_DOWN', `the lines of this page could not be read: ${CUT_REASONS.shutdown(limits)}`, 'call it again: another replica, or this server once it is back, answers it')
}

/**
 * ripgrep threads for a child that starts while `running` searches hold a slot (itself included): a lone
 * search gets every core, concurrent ones share them. Each child defaulting to every core made two of
 * them starve the event loop on 2 cores (a cheap call's p99 2.7 s → 0.34 s under the limits bench).
 */
export function threadsFor (running: number, cores = CORES): number {
  return Math.max(1, Math.floor(cores / Math.max(1, running)))
}

/** Locates ripgrep (configured, bundled, then PATH outside the roots) and returns the search service. */
export async function createSearch (opts: CreateSearchOptions): Promise<SearchService> {
  const rg = await locateRg(opts.rgPath, opts.workspace.roots.map(r => r.path))
  return searchService(rg, { ...opts, limiter: opts.limiter ?? createLimiter() }, { live: new Set(), stops: new Set() })
}

/**
 * The service over one workspace. What `shared` holds — the version probe and the running ripgrep PIDs — is the same
 * for the services made by `over`, so close() at shutdown kills a narrowed session's searches too.
 */
/** What the services made by `over` share with the one they came from. */
interface SearchShared {
  probe?: Promise<EngineInfo>
  /** ripgrep children running now, by PID (close() kills them). */
  live: Set<number>
  /** How to end each running child early (windDown). */
  stops: Set<() => void>
}

function searchService (rg: { rgPath: string, source: string }, opts: CreateSearchOptions & { limiter: Limiter }, shared: SearchShared): SearchService {
  const { workspace, log, limiter } = opts
  const limits: SearchLimits = {
    timeoutMs: opts.timeoutMs ?? 15_000,
    maxFiles: opts.maxFiles ?? 100_000,
    maxFileSize: MAX_FILE_SIZE,
    cacheTtlMs: opts.cacheTtlMs ?? 60_000
  }
  const cache = createResultCache<ResultSet>({ ttlMs: limits.cacheTtlMs, maxEntries: 32, maxWeight: 96 * 1024 * 1024 })
  const { live } = shared
  const now = opts.now ?? Date.now

  /** One file of a result, resolved again through the jail and opened no-follow for ripgrep; undefined when it no longer resolves to a file. */
  async function pinFile (path: string): Promise<PinnedPath | undefined> {
    try {
      const pinned = await workspace.pin(await workspace.resolve(path, { field: 'path', mustExist: false }))
      if (!pinned.isDirectory) return pinned
      await pinned.close()
    } catch {
      // Moved, removed or replaced since it was counted: the page's re-check says so.
    }
    return undefined
  }

  /** The passes' view of the service for one search: its deadline starts when its first ripgrep gets a slot. */
  function passContext (part: WorkspacePart, clock: SearchClock): PassContext {
    return {
      renewed: () => passContext(part, {}),
      // Every ripgrep child runs in a slot of the process-wide limiter (BUSY when its queue is full).
      run: (pass: Pass) => limiter.run('search', pass.signal, (running) => {
        clock.started ??= now()
        clock.deadline ??= Date.now() + limits.timeoutMs
        const deadline = clock.deadline
        // Alone, ripgrep keeps the server's priority; beside another search, both yield to the event loop.
        const beside = running > 1
        if (beside) for (const pid of live) renice(pid, SHARED_NICENESS)
        return runRg({
          rgPath: rg.rgPath,
          args: ['--threads', String(threadsFor(running)), ...pass.target.args, ...pass.args],
          cwd: pass.target.cwd,
          signal: pass.signal,
          deadline,
          separator: pass.separator,
          onRecord: pass.onRecord,
          onLongRecord: pass.onLongRecord,
          input: pass.input,
          ...(beside ? { niceness: SHARED_NICENESS } : {}),
          names: pass.target.names,
          live,
          stops: shared.stops
        })
      }),
      pin: () => pinTarget(part, false),
      pinFile,
      timeoutMs: limits.timeoutMs,
      maxFiles: limits.maxFiles,
      maxPageBytes: opts.maxPageBytes ?? MAX_PAGE_BYTES,
      seekFrom: opts.seekFrom ?? SEEK_FROM
    }
  }

  /**
   * The items of one content page: its files' windows of lines, read for the page. When that read was cut, the page
   * ends at the cut: what comes after it is the next page's.
   */
  async function contentPage (set: ResultSet, offset: number, pageSize: number, contextLines: number, signal?: AbortSignal): Promise<{ items: ContentItem[], cut?: PageCut }> {
    if (offset >= set.total) return { items: [] }
    // Binary search for the file holding item `offset`.
    let lo = 0
    let hi = set.files.length - 1
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1
      if (set.prefix[mid] <= offset) lo = mid
      else hi = mid - 1
    }
    const span: Array<{ file: ResultSet['files'][number], first: number }> = []
    for (let i = lo; i < set.files.length && set.prefix[i] < offset + pageSize; i++) span.push({ file: set.files[i], first: set.prefix[i] })
    const wants: WindowWant[] = span.map(({ file, first }) => ({ entry: file, from: Math.max(0, offset - first), to: Math.min(file.count, offset + pageSize - first) }))
    // A content set always has a fetch (passes.ts, mergeSets).
    const { windows, cut } = await (set.fetch as NonNullable<ResultSet['fetch']>)(wants, signal)
    const items: ContentItem[] = []
    for (const { file, first } of span) {
      // A fetch answers for every file it is given.
      const { lines, first: shift, whole } = windows.get(file) as FileWindow
      // A window cut short shows only the matches whose context below was read whole.
      const below = whole ? Number.POSITIVE_INFINITY : (lines.at(-1)?.line ?? 0) - contextLines
      let index = first + shift
      for (let i = 0; i < lines.length && items.length < pageSize && lines[i].line <= below; i++) {
        if (!lines[i].match) continue
        if (index++ < offset) continue
        const hit = lines[i]
        const context: SearchLine[] = []
        if (contextLines > 0) {
          for (let j = i - 1; j >= 0 && lines[j].line >= hit.line - contextLines; j--) context.unshift(lines[j])
          for (let j = i + 1; j < lines.length && lines[j].line <= hit.line + contextLines; j++) context.push(lines[j])
        }
        items.push({ path: file.path, hit, context })
      }
      if (!whole) break
    }
    return { items, ...(cut === undefined ? {} : { cut }) }
  }

  /** Slices a page, re-checks its files, and slices again without the ones that failed (they leave the set for good). */
  async function checkedPage (set: ResultSet, offset: number, pageSize: number, contextLines: number, signal?: AbortSignal): Promise<{ content: ContentItem[], files: FileItem[], cut?: PageCut }> {
    const checked = new Set<string>()
    for (let round = 0; ; round++) {
      const { items: content, cut } = set.mode === 'content' ? await contentPage(set, offset, pageSize, contextLines, signal) : { items: [] }
      const files = set.mode === 'content' ? [] : set.files.slice(offset, offset + pageSize)
      const paths = [...content, ...files].map(item => item.path).filter(p => !checked.has(p))
      const page = { content, files, ...(cut === undefined ? {} : { cut }) }
      if (paths.length === 0) return page
      const verdicts = await recheckFiles(workspace, paths, signal)
      signal?.throwIfAborted()
      for (const p of paths) checked.add(p)
      if (verdicts.size === 0) return page
      dropFiles(set, verdicts)
      log.debug({ dropped: verdicts.size }, 'search results dropped by the re-check')
      if (round >= MAX_RECHECK_ROUNDS) {
        // Files keep failing (the tree is being changed under the server): show the page without them.
        const keep = (item: { path: string }): boolean => !verdicts.has(item.path)
        return { ...page, content: content.filter(keep), files: files.filter(keep) }
      }
    }
  }

  /** The probe for hidden matches, with the rule that hides the first one; a failed probe says nothing. */
  async function hiddenMatches (ctx: PassContext, req: Required<SearchRequest>, target: SearchTarget, set: ResultSet, signal?: AbortSignal): Promise<HiddenMatches | undefined> {
    const probe = await probeHidden(ctx, req, target, new Set(set.files.map(f => f.path)), signal)
    if (probe === undefined || probe.paths.length === 0) return undefined
    const example = probe.paths[0]
    const rule = await workspace.explainIgnored(example, false)
    return { files: probe.paths.length, lowerBound: probe.lowerBound, example, ...(rule === undefined ? {} : { rule }) }
  }

  /** One root's part of a search: its folder pinned, searched, and probed for hidden matches when the answer is small. */
  async function searchPart (part: WorkspacePart, req: Required<SearchRequest>, clock: SearchClock, signal?: AbortSignal): Promise<{ set: ResultSet, named: boolean }> {
    const ctx = passContext(part, clock)
    const target = await pinTarget(part, req.respectGitignore)
    try {
      const set = req.mode === 'content' ? await searchContent(ctx, req, target, signal) : await searchFiles(ctx, req, target, signal)
      if (req.respectGitignore && !target.named && set.complete && !set.lowerBound && set.files.length < PROBE_HIDDEN_BELOW) {
        set.hidden = await hiddenMatches(ctx, req, target, set, signal)
      }
      return { set, named: target.named }
    } finally {
      await target.close()
    }
  }

  return {
    engine () {
      shared.probe ??= probeRg(rg.rgPath).then(info => ({ ...info, source: rg.source }))
      return shared.probe
    },

    over: (other) => searchService(rg, { ...opts, workspace: other }, shared),
    limits,

    async search (request, { offset, pageSize, signal }) {
      const resolved = await workspace.resolve(request.path ?? '.', { field: 'path', signal })
      const req: Required<SearchRequest> = {
        pattern: request.pattern,
        literal: request.literal ?? false,
        ignoreCase: request.ignoreCase ?? false,
        path: resolved.relative,
        include: request.include ?? [],
        exclude: request.exclude ?? [],
        contextLines: request.mode === undefined || request.mode === 'content' ? Math.max(0, Math.min(10, request.contextLines ?? 0)) : 0,
        mode: request.mode ?? 'content',
        respectGitignore: request.respectGitignore ?? true
      }
      // Context is part of the key: the stored lines differ. Offset and page size are not.
      const key = JSON.stringify(req)
      let set = cache.get(key)
      const cached = set !== undefined
      let slow: string | undefined
      if (set === undefined) {
        // A call that would only be refused skips pinning the target and reading its ignore rules.
        limiter.admit('search')
        const started = Date.now()
        // Several roots (the top of them) are searched one after the other, within one deadline, in root order.
        const clock: SearchClock = {}
        const parts: Array<{ set: ResultSet, named: boolean }> = []
        for (const part of workspace.parts(resolved)) parts.push(await searchPart(part, req, clock, signal))
        set = parts.length === 1 ? parts[0].set : mergeSets(parts.map(p => p.set))
        // A run that did not finish (killed, crashed, cut) is never cached: the next call searches again.
        if (set.complete) cache.set(key, set, weightOf(set))
        // A search cut short says so already; one that finished in more than half its time says it too.
        if (!set.lowerBound) slow = slowSearchNotice(now() - (clock.started as number), limits.timeoutMs, parts[0].named)
        log.debug({ mode: req.mode, total: set.total, complete: set.complete, ms: Date.now() - started }, 'search finished')
      }
      const start = Math.max(0, Math.floor(offset))
      const size = Math.max(1, Math.floor(pageSize))
      const { content, files, cut } = await checkedPage(set, start, size, req.contextLines, signal)
      const notices = noticesOf(set)
      if (slow !== undefined) notices.push(slow)
      if (cut !== undefined) {
        const pageLimits = { timeoutMs: limits.timeoutMs, pageBytes: opts.maxPageBytes ?? MAX_PAGE_BYTES }
        // A page cut before its first result would only repeat itself: the call fails, saying why.
        if (content.length === 0 && cut !== 'budget') throw CUT_ERRORS[cut](pageLimits)
        notices.push(`this page was cut at ${content.length} of ${size} results: ${CUT_REASONS[cut](pageLimits)} — the footer's next call continues after them`)
      }
      return {
        mode: set.mode,
        content,
        files,
        total: set.total,
        totalIsLowerBound: set.lowerBound,
        fileCount: set.files.length,
        lineCount: set.lineCount,
        notices,
        cached,
        path: req.path,
        ...(set.hidden === undefined ? {} : { hidden: set.hidden })
      }
    },

    activePids: () => [...live],

    windDown () {
      for (const stop of [...shared.stops]) stop()
    },

    close () {
      for (const pid of live) {
        try {
          process.kill(pid, 'SIGKILL')
        } catch /* c8 ignore start */ {
          // It exited in the moment between its exit and the 'close' event that takes it out of `live`.
        } /* c8 ignore stop */
      }
      cache.clear()
    }
  }
}
