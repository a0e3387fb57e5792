import { stat } from 'node:fs/promises'
import { toolError } from '../errors.js'
import type { ContentItem, CreateSearchOptions, EngineInfo, SearchLimits, SearchMode, SearchRequest, SearchService } from './search-types.js'
import { compareText } from './compare-text.js'
import { createResultCache } from './result-cache.js'
import { displayPath, isEndRecord, parseCountRecord, parseRgJson, type SearchLine } from './search-parse.js'
import { ancestorRules } from './search-ignore.js'
import { locateRg, probeRg } from './search-locate.js'
import { classifyRgError, runRg, type RgRun } from './search-rg.js'

export { MAX_LINE_CHARS, type SearchLine } from './search-parse.js'
export type { ContentItem, CreateSearchOptions, EngineInfo, FileItem, SearchLimits, SearchMode, SearchPage, SearchRequest, SearchService } from './search-types.js'

interface FileEntry {
  path: string
  count: number
  /** Every line ripgrep printed for the file (matches and context), in order; absent until fetched. */
  lines?: SearchLine[]
}

interface ResultSet {
  mode: SearchMode
  files: FileEntry[]
  /** prefix[i] = matching lines in files[0..i) (content mode). */
  prefix: number[]
  total: number
  lowerBound: boolean
  notices: string[]
  lineCount: number
  /** Fetches the lines of some files on demand (count-then-fetch strategy). */
  fetch?: (entries: FileEntry[], signal?: AbortSignal) => Promise<void>
}

const MAX_FILE_SIZE = '10M'
const MAX_NAMED_FILE_SIZE = '100M'
const MAX_COLLECTED_BYTES = 48 * 1024 * 1024
/** JSON read in counting mode before switching to a `--count` pass (its output is far smaller). */
const MAX_COUNTING_BYTES = 4 * 1024 * 1024
const byPath = (a: { path: string }, b: { path: string }): number => compareText(a.path, b.path)
const PER_PATH_PROBLEM = /os error|Permission denied|File system loop|No such file|IO error/i

/** Locates ripgrep (bundled first, then PATH) and returns the search service. */
export async function createSearch (opts: CreateSearchOptions): Promise<SearchService> {
  const { workspace, log } = opts
  const rg = await locateRg(opts.rgPath)
  let probe: Promise<EngineInfo> | undefined
  const limits: SearchLimits = {
    timeoutMs: opts.timeoutMs ?? 15_000,
    maxCollected: opts.maxCollected ?? 10_000,
    maxFiles: opts.maxFiles ?? 100_000,
    maxFileSize: MAX_FILE_SIZE,
    cacheTtlMs: opts.cacheTtlMs ?? 60_000
  }
  const cache = createResultCache<ResultSet>({ ttlMs: limits.cacheTtlMs, maxEntries: 32, maxWeight: 96 * 1024 * 1024 })
  const live = new Set<number>()
  const maxCountingBytes = opts.maxCountingBytes ?? MAX_COUNTING_BYTES
  const root = workspace.root
  const run = (args: string[], separator: number, onRecord: (r: Buffer) => boolean | undefined, deadline: number, signal?: AbortSignal): Promise<RgRun> =>
    runRg({ rgPath: rg.rgPath, args, cwd: root, signal, deadline, separator, onRecord, live })

  function baseArgs (req: Required<SearchRequest>, named: boolean): string[] {
    const args = ['--no-config', '--no-require-git', '--no-ignore-global', '--no-ignore-parent', '--max-filesize', named ? MAX_NAMED_FILE_SIZE : MAX_FILE_SIZE]
    if (req.literal) args.push('--fixed-strings')
    if (req.ignoreCase) args.push('--ignore-case')
    for (const g of req.include) args.push('--glob', g)
    for (const g of req.exclude) args.push('--glob', `!${g.replace(/^!/, '')}`)
    args.push('--regexp', req.pattern)
    return args
  }

  /** Checks a finished run: regex/glob errors throw; per-path problems become notices; a cut run marks the set partial. */
  function inspect (r: RgRun, req: Required<SearchRequest>, notices: string[], signal?: AbortSignal): boolean {
    if (r.end === 'aborted') throw signal?.reason ?? toolError('CANCELLED', 'the search was cancelled')
    if (r.code === 2) {
      const err = classifyRgError(r.stderr, req.pattern)
      if (err !== undefined) throw err
      const lines = r.stderr.split('\n').filter(l => l.trim() !== '')
      if (lines.length > 0 && !lines.every(l => PER_PATH_PROBLEM.test(l))) {
        throw toolError('SEARCH_FAILED', `ripgrep failed: ${lines.slice(0, 3).join('; ').slice(0, 500)}`, 'check include/exclude and path, then call again')
      }
      notices.push(`${lines.length} path(s) could not be searched: ${lines.slice(0, 3).map(l => l.replace(/^rg: /, '')).join('; ')}`)
    }
    if (r.end === 'deadline') {
      notices.push(`search stopped after ${Math.round(limits.timeoutMs / 1000)} s; results are partial — narrow path or include`)
      return true
    }
    return false
  }

  async function searchContent (req: Required<SearchRequest>, target: string, named: boolean, walk: string[], signal?: AbortSignal): Promise<ResultSet> {
    const deadline = Date.now() + limits.timeoutMs
    const notices: string[] = []
    const json = [...baseArgs(req, named), '--json']
    if (req.contextLines > 0) json.push('--context', String(req.contextLines))
    const jsonArgs = (paths: string[]): string[] => [...json, '--', ...paths]
    type Entry = FileEntry & { done: boolean }
    const byFile = new Map<string, Entry>()
    const entryOf = (map: Map<string, Entry>, file: string): Entry => {
      let entry = map.get(file)
      if (entry === undefined) {
        entry = { path: file, count: 0, lines: [], done: false }
        map.set(file, entry)
      }
      return entry
    }
    const collector = (map: Map<string, Entry>, limit: number) => {
      const state = { counting: false }
      let matches = 0
      let held = 0
      let countedBytes = 0
      const onRecord = (record: Buffer): boolean => {
        if (state.counting) {
        // Counting mode: only each file's end event (with its matched-line count) is parsed.
          countedBytes += record.length + 1
          if (isEndRecord(record)) {
            const ev = parseRgJson(record)
            if (ev.type === 'end') {
              const entry = entryOf(map, ev.path)
              if (!entry.done) {
                entry.count = ev.matchedLines
                entry.lines = undefined
              }
              entry.done = true
            }
          }
          return countedBytes <= maxCountingBytes
        }
        let ev: ReturnType<typeof parseRgJson>
        try {
          ev = parseRgJson(record)
        } catch {
        // Not ripgrep's JSON (a cut line after a kill is never passed here); skip it rather than fail the search.
          return true
        }
        if (ev.type === 'other') return true
        const entry = entryOf(map, ev.path)
        if (ev.type === 'end') {
          entry.done = true
          return true
        }
        entry.lines!.push(ev.line)
        held += ev.line.text.length
        if (ev.line.match) {
          entry.count++
          matches++
        }
        if (matches > limit || held > MAX_COLLECTED_BYTES) {
        // Too many lines to hold: keep the complete files, and only count the rest (pages fetch them later).
          state.counting = true
          for (const e of map.values()) {
            if (e.done) continue
            e.lines = undefined
            e.count = 0
          }
        }
        return true
      }
      return { onRecord, state }
    }

    const stage = collector(byFile, limits.maxCollected)
    const first = await run([...walk, ...jsonArgs([target])], 10, stage.onRecord, deadline, signal)
    const partial = inspect(first, req, notices, signal)
    let set: ResultSet
    if (first.end !== 'stopped') {
      const files = [...byFile.values()].filter(f => f.count > 0).sort(byPath)
      set = finishContent(files, partial, notices)
      if (!stage.state.counting) return set
    } else {
      // Even counting, the JSON stream was too big: count every file with --count (small output, exact total).
      const counts: FileEntry[] = []
      const second = await run([...walk, ...baseArgs(req, named), '--count', '--null', '--with-filename', '--', target], 10, record => {
        const c = parseCountRecord(record)
        if (c !== undefined) counts.push({ path: c.path, count: c.count })
        return counts.length < limits.maxFiles
      }, deadline, signal)
      const countPartial = inspect(second, req, notices, signal)
      if (second.end === 'stopped') notices.push(`more than ${limits.maxFiles} files match; total is a lower bound — narrow path or include`)
      counts.sort(byPath)
      for (const entry of counts) {
        const seen = byFile.get(entry.path)
        if (seen?.done === true && seen.lines !== undefined && seen.count === entry.count) entry.lines = seen.lines
      }
      set = finishContent(counts, countPartial || second.end === 'stopped', notices)
    }
    set.fetch = async (entries, fetchSignal) => {
      // Names that are not valid UTF-8 cannot be passed as arguments; they stay empty (shown as a notice).
      const wanted = entries.filter(e => !e.path.includes('\\x'))
      const got = new Map<string, Entry>()
      if (wanted.length > 0) {
        const r = await run(jsonArgs(wanted.map(e => e.path)), 10, collector(got, Number.POSITIVE_INFINITY).onRecord, Date.now() + limits.timeoutMs, fetchSignal)
        inspect(r, req, [], fetchSignal)
      }
      for (const e of entries) e.lines = got.get(e.path)?.lines ?? []
    }
    return set
  }

  function finishContent (files: FileEntry[], lowerBound: boolean, notices: string[]): ResultSet {
    const prefix = [0]
    for (const f of files) prefix.push(prefix[prefix.length - 1] + f.count)
    const total = prefix[prefix.length - 1]
    return { mode: 'content', files, prefix, total, lowerBound, notices, lineCount: total }
  }

  async function searchFiles (req: Required<SearchRequest>, target: string, named: boolean, walk: string[], signal?: AbortSignal): Promise<ResultSet> {
    const notices: string[] = []
    const files: FileEntry[] = []
    const count = req.mode === 'count'
    const args = [...walk, ...baseArgs(req, named), count ? '--count' : '--files-with-matches', '--null', '--with-filename', '--', target]
    const r = await run(args, count ? 10 : 0, record => {
      if (count) {
        const c = parseCountRecord(record)
        if (c !== undefined) files.push({ path: c.path, count: c.count })
      } else if (record.length > 0) {
        files.push({ path: displayPath(record), count: -1 })
      }
      return files.length < limits.maxFiles
    }, Date.now() + limits.timeoutMs, signal)
    let lowerBound = inspect(r, req, notices, signal)
    if (r.end === 'stopped') {
      lowerBound = true
      notices.push(`stopped at ${limits.maxFiles} files; total is a lower bound — narrow path or include`)
    }
    files.sort(byPath)
    const lineCount = count ? files.reduce((n, f) => n + f.count, 0) : 0
    return { mode: req.mode, files, prefix: [], total: files.length, lowerBound, notices, lineCount }
  }

  async function contentPage (set: ResultSet, offset: number, pageSize: number, contextLines: number, signal?: AbortSignal): Promise<ContentItem[]> {
    if (offset >= set.total) return []
    // Binary search for the file holding item `offset`.
    let lo = 0
    let hi = set.files.length - 1
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1
      if (set.prefix[mid] <= offset) lo = mid
      else hi = mid - 1
    }
    const span: FileEntry[] = []
    for (let i = lo; i < set.files.length && set.prefix[i] < offset + pageSize; i++) span.push(set.files[i])
    const missing = span.filter(f => f.lines === undefined)
    if (missing.length > 0 && set.fetch !== undefined) await set.fetch(missing, signal)
    const items: ContentItem[] = []
    for (const file of span) {
      const lines = file.lines ?? []
      let index = set.prefix[set.files.indexOf(file, lo)]
      for (let i = 0; i < lines.length && items.length < pageSize; i++) {
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
    }
    return items
  }

  function weightOf (set: ResultSet): number {
    let w = 1024
    for (const f of set.files) {
      w += f.path.length * 2 + 64
      if (f.lines !== undefined) for (const l of f.lines) w += l.text.length * 2 + 64
    }
    return w
  }

  return {
    engine () {
      probe ??= probeRg(rg.rgPath).then(info => ({ ...info, source: rg.source }))
      return probe
    },
    limits,

    async search (request, { offset, pageSize, signal }) {
      const resolved = await workspace.resolve(request.path ?? '.', { field: 'path' })
      if (Buffer.isBuffer(resolved.fsPath)) {
        throw toolError('INVALID_PATH', `path: "${resolved.relative}" has a name that is not valid UTF-8 and cannot be passed to ripgrep`, 'search its parent folder instead')
      }
      const info = await stat(resolved.fsPath).catch((err: unknown) => { throw workspace.fsError(err, resolved.requested) })
      if (!info.isFile() && !info.isDirectory()) {
        throw toolError('NOT_A_REGULAR_FILE', `path: "${resolved.requested}" is not a regular file or folder`, 'search a folder or a regular file')
      }
      const req: Required<SearchRequest> = {
        pattern: request.pattern,
        literal: request.literal ?? false,
        ignoreCase: request.ignoreCase ?? false,
        path: resolved.relative,
        include: request.include ?? [],
        exclude: request.exclude ?? [],
        contextLines: request.mode === undefined || request.mode === 'content' ? Math.max(0, Math.min(10, request.contextLines ?? 0)) : 0,
        mode: request.mode ?? 'content'
      }
      // Context is part of the key: the stored lines differ. Offset and page size are not.
      const key = JSON.stringify(req)
      let set = cache.get(key)
      const cached = set !== undefined
      if (set === undefined) {
        const started = Date.now()
        const named = info.isFile()
        const rules = named ? undefined : await ancestorRules(root, req.path)
        try {
          set = req.mode === 'content'
            ? await searchContent(req, req.path, named, rules?.args ?? [], signal)
            : await searchFiles(req, req.path, named, rules?.args ?? [], signal)
        } finally {
          await rules?.dispose()
        }
        cache.set(key, set, weightOf(set))
        log.debug({ mode: req.mode, total: set.total, ms: Date.now() - started }, 'search finished')
      }
      const start = Math.max(0, Math.floor(offset))
      const size = Math.max(1, Math.floor(pageSize))
      const content = set.mode === 'content' ? await contentPage(set, start, size, req.contextLines, signal) : []
      const files = set.mode === 'content' ? [] : set.files.slice(start, start + size)
      return {
        mode: set.mode,
        content,
        files,
        total: set.total,
        totalIsLowerBound: set.lowerBound,
        fileCount: set.files.length,
        lineCount: set.lineCount,
        notices: [...set.notices],
        cached,
        path: req.path
      }
    },

    activePids: () => [...live],

    close () {
      for (const pid of live) {
        try { process.kill(pid, 'SIGKILL') } catch {}
      }
      cache.clear()
    }
  }
}
