import type { Readable } from 'node:stream'
import type { SearchRequest } from './types.js'
import { compareText } from '../compare-text.js'
import { countRecordParser, displayPath, isEndRecord, isSummaryRecord, parseRgJson, type RgEvent } from './parse.js'
import { createLongRecordScanner } from './long-line.js'
import { failedRun, inspectRun } from './inspect.js'
import { lineWeight, makeSet, type FetchedWindows, type FileEntry, type ResultSet, type WindowWant } from './set.js'
import { cutOf, windowCollector } from './window.js'
import { seekWindow } from './seek.js'
import type { LongRecordSink, RgRun, RgSkipped } from './rg.js'
import type { SearchTarget } from './target.js'

/** One ripgrep pass over a pinned target, as search.ts runs it (in a limiter slot, with the search's deadline). */
export interface Pass {
  target: SearchTarget
  /** Arguments; the target's own (ignore rules) are put first, its operands come after `--`. */
  args: string[]
  separator: number
  onRecord: (record: Buffer) => boolean | undefined
  onLongRecord?: () => LongRecordSink
  /** Bytes for ripgrep's stdin (the pass searches `-`). */
  input?: Readable
  signal?: AbortSignal
}

/** What the passes need from the service. */
export interface PassContext {
  run(pass: Pass): Promise<RgRun>
  /** Pins the searched path again (later pages fetch lines after the first run's pin is closed). */
  pin(): Promise<SearchTarget>
  /** The same context for a later call: a deadline of its own (a page read a minute on must not inherit the first call's). */
  renewed(): PassContext
  timeoutMs: number
  maxCollected: number
  maxFiles: number
  maxCountingBytes: number
  /** Bytes of lines one page may hold while its windows are read (past it, the page is cut). */
  maxPageBytes: number
  /** A named file's window that starts this many matches in is sought (seek.ts), not read from the file's start. */
  seekFrom: number
}

const MAX_FILE_SIZE = '10M'
const MAX_NAMED_FILE_SIZE = '100M'
/** Bytes of lines the first pass holds (lineWeight) before it only counts: what a search keeps, whatever it finds. */
const MAX_HELD_BYTES = 16 * 1024 * 1024
const byPath = (a: { path: string }, b: { path: string }): number => compareText(a.path, b.path)
const worst = (a: RgSkipped, b: RgSkipped): RgSkipped => ({ binary: Math.max(a.binary, b.binary), tooLarge: Math.max(a.tooLarge, b.tooLarge) })

/** The walk and match flags of every pass (`--debug` is read only to count the files ripgrep skips silently). */
export function baseArgs (req: Required<SearchRequest>, named: boolean): string[] {
  const args = ['--no-config', '--no-require-git', '--no-ignore-global', '--no-ignore-parent', '--debug', '--max-filesize', named ? MAX_NAMED_FILE_SIZE : MAX_FILE_SIZE]
  if (!req.respectGitignore) args.push('--no-ignore')
  if (req.literal) args.push('--fixed-strings')
  if (req.ignoreCase) args.push('--ignore-case')
  for (const g of req.include) args.push('--glob', g)
  for (const g of req.exclude) args.push('--glob', `!${g.replace(/^!/, '')}`)
  args.push('--regexp', req.pattern)
  return args
}

type Entry = FileEntry & { done: boolean }

/** Collects `rg --json` events per file; past `limit` matching lines (or the byte cap) it only counts. */
function collector (target: SearchTarget, map: Map<string, Entry>, limit: number, maxCountingBytes: number) {
  const state = { counting: false, summary: false, matches: 0 }
  let held = 0
  let countedBytes = 0
  const entryOf = (file: string): Entry => {
    let entry = map.get(file)
    if (entry === undefined) {
      entry = { path: file, count: 0, lines: [], done: false }
      map.set(file, entry)
    }
    return entry
  }
  const onEvent = (ev: RgEvent): boolean => {
    if (ev.type === 'other') return true
    const entry = entryOf(target.toRelative(ev.path))
    if (ev.type === 'end') {
      entry.done = true
      return true
    }
    entry.lines!.push(ev.line)
    held += lineWeight(ev.line)
    if (ev.line.match) {
      entry.count++
      state.matches++
    }
    if (state.matches > limit || held > MAX_HELD_BYTES) {
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
  const onRecord = (record: Buffer): boolean => {
    if (isSummaryRecord(record)) state.summary = true
    if (state.counting) {
      // Counting mode: only each file's end event (with its matched-line count) is parsed.
      countedBytes += record.length + 1
      if (isEndRecord(record)) {
        const ev = parseRgJson(record)
        if (ev.type === 'end') {
          const entry = entryOf(target.toRelative(ev.path))
          if (!entry.done) {
            entry.count = ev.matchedLines
            entry.lines = undefined
          }
          entry.done = true
        }
      }
      return countedBytes <= maxCountingBytes
    }
    try {
      return onEvent(parseRgJson(record))
    } catch {
      // Not ripgrep's JSON (a cut record is never passed here); skip it rather than fail the search.
      return true
    }
  }
  /** A record too long to hold: scanned for its head, line number and first characters (shown as a cut line). */
  const onLongRecord = (): LongRecordSink => {
    const scanner = createLongRecordScanner()
    let bytes = 0
    return {
      push (piece) {
        bytes += piece.length
        if (!state.counting) scanner.push(piece)
      },
      end () {
        if (state.counting) {
          countedBytes += bytes
          return countedBytes <= maxCountingBytes
        }
        const ev = scanner.end()
        return ev === undefined ? true : onEvent(ev)
      }
    }
  }
  return { onRecord, onLongRecord, state }
}

/** Content mode: lines with context, streamed; past the collection cap, counted then fetched per page. */
export async function searchContent (ctx: PassContext, req: Required<SearchRequest>, target: SearchTarget, signal?: AbortSignal): Promise<ResultSet> {
  const notices: string[] = []
  const json = [...baseArgs(req, target.named), '--json']
  if (req.contextLines > 0) json.push('--context', String(req.contextLines))
  const byFile = new Map<string, Entry>()
  // A named file's one end event comes last: counting its JSON would only delay the --count pass that gives it.
  const stage = collector(target, byFile, ctx.maxCollected, target.named ? 0 : ctx.maxCountingBytes)
  const first = await ctx.run({ target, args: [...json, '--', ...target.paths], separator: 10, onRecord: stage.onRecord, onLongRecord: stage.onLongRecord, signal })
  const verdict = inspectRun(first, req.pattern, notices, { json: first.end === 'exit', sawSummary: stage.state.summary, timeoutMs: ctx.timeoutMs, signal })
  let set: ResultSet
  if (first.end !== 'stopped') {
    const files = [...byFile.values()].filter(f => f.count > 0).sort(byPath)
    if (verdict.failed !== undefined) failedRun(verdict.failed, files.length, notices)
    set = makeSet('content', files, { lowerBound: verdict.partial || verdict.failed !== undefined, notices, complete: verdict.failed === undefined, skipped: first.skipped, unreadable: verdict.unreadable })
    if (!stage.state.counting) return set
  } else {
    // Even counting, the JSON stream was too big: count every file with --count (small output, exact total).
    const counts: FileEntry[] = []
    const parseCount = countRecordParser()
    const second = await ctx.run({
      target,
      args: [...baseArgs(req, target.named), '--count', '--null', '--with-filename', '--', ...target.paths],
      separator: 10,
      onRecord: record => {
        const c = parseCount(record)
        if (c !== undefined) counts.push({ path: target.toRelative(c.path), count: c.count })
        return counts.length < ctx.maxFiles
      },
      signal
    })
    const countVerdict = inspectRun(second, req.pattern, notices, { json: false, sawSummary: false, timeoutMs: ctx.timeoutMs, signal })
    if (second.end === 'stopped') notices.push(`more than ${ctx.maxFiles} files match; total is a lower bound — narrow path or include`)
    if (countVerdict.failed !== undefined) failedRun(countVerdict.failed, counts.length, notices)
    counts.sort(byPath)
    for (const entry of counts) {
      const seen = byFile.get(entry.path)
      if (seen?.done === true && seen.lines !== undefined && seen.count === entry.count) entry.lines = seen.lines
    }
    set = makeSet('content', counts, {
      lowerBound: countVerdict.partial || second.end === 'stopped' || countVerdict.failed !== undefined,
      notices,
      complete: countVerdict.failed === undefined,
      skipped: worst(first.skipped, second.skipped),
      unreadable: countVerdict.unreadable
    })
  }
  set.fetch = (wants, fetchSignal) => fetchWindows(ctx.renewed(), json, req, wants, fetchSignal)
  return set
}

/**
 * Reads the windows a page needs of some files of a counted set (the searched path pinned again, the files named
 * under it), keeping only those lines. A named file's window far into its matches is sought; any other is read
 * from the files' start, and ripgrep stopped once every window is complete.
 */
async function fetchWindows (ctx: PassContext, json: string[], req: Required<SearchRequest>, wants: WindowWant[], signal?: AbortSignal): Promise<FetchedWindows> {
  const target = await ctx.pin()
  try {
    // A named file's set has that one file.
    const sought = target.named && wants[0].from >= ctx.seekFrom ? await seekWindow(ctx, { plain: baseArgs(req, true), json }, req, target, wants[0], signal) : undefined
    return sought ?? await readWindows(ctx, json, req, target, wants, signal)
  } finally {
    await target.close()
  }
}

/** The windows read through from the files' start. */
async function readWindows (ctx: PassContext, json: string[], req: Required<SearchRequest>, target: SearchTarget, wants: WindowWant[], signal?: AbortSignal): Promise<FetchedWindows> {
  const stage = windowCollector(target.toRelative, wants, req.contextLines, ctx.maxPageBytes)
  // Names that cannot be passed as arguments (not UTF-8) stay empty.
  const operands = wants.map(w => target.operand(w.entry.path)).filter((o): o is string => o !== undefined)
  // With nothing to run (no name could be passed), every window is complete, and empty.
  if (operands.length === 0) return { windows: stage.windows(true) }
  // For a folder the operands are relative to it; ripgrep prints them back as given (`./x`). One thread reads them
  // in the page's order, so a read cut short (budget, deadline) has read the page's first files, not its last.
  const r = await ctx.run({ target, args: [...json, '--threads', '1', '--', ...operands], separator: 10, onRecord: stage.onRecord, onLongRecord: stage.onLongRecord, signal })
  const verdict = inspectRun(r, req.pattern, [], { json: r.end === 'exit', sawSummary: stage.sawSummary, timeoutMs: ctx.timeoutMs, signal })
  if (verdict.failed !== undefined) failedRun(verdict.failed, 0, [])
  const cut = cutOf(r.end, stage.overBudget)
  return { windows: stage.windows(r.end === 'exit'), ...(cut === undefined ? {} : { cut }) }
}

/** Files and count modes: `--files-with-matches` or `--count`, paths only. */
export async function searchFiles (ctx: PassContext, req: Required<SearchRequest>, target: SearchTarget, signal?: AbortSignal): Promise<ResultSet> {
  const notices: string[] = []
  const files: FileEntry[] = []
  const count = req.mode === 'count'
  const parseCount = countRecordParser()
  const args = [...baseArgs(req, target.named), count ? '--count' : '--files-with-matches', '--null', '--with-filename', '--', ...target.paths]
  const r = await ctx.run({
    target,
    args,
    separator: count ? 10 : 0,
    onRecord: record => {
      if (count) {
        const c = parseCount(record)
        if (c !== undefined) files.push({ path: target.toRelative(c.path), count: c.count })
      } else if (record.length > 0) {
        files.push({ path: target.toRelative(displayPath(record)), count: -1 })
      }
      return files.length < ctx.maxFiles
    },
    signal
  })
  const verdict = inspectRun(r, req.pattern, notices, { json: false, sawSummary: false, timeoutMs: ctx.timeoutMs, signal })
  if (verdict.failed !== undefined) failedRun(verdict.failed, files.length, notices)
  if (r.end === 'stopped') notices.push(`stopped at ${ctx.maxFiles} files; total is a lower bound — narrow path or include`)
  files.sort(byPath)
  return makeSet(req.mode, files, {
    lowerBound: verdict.partial || r.end === 'stopped' || verdict.failed !== undefined,
    notices,
    complete: verdict.failed === undefined,
    skipped: r.skipped,
    unreadable: verdict.unreadable
  })
}

/** Most hidden files a probe lists before it stops (the count is then a lower bound). */
const MAX_HIDDEN_PROBED = 1000

/**
 * Which matching files the ignore rules hid: the same search without them (`--no-ignore`, and none of the
 * ancestors' rules), paths only, minus the files already found. Undefined when the probe did not finish
 * cleanly — a hint is never worth a misleading figure.
 */
export async function probeHidden (ctx: PassContext, req: Required<SearchRequest>, target: SearchTarget, found: Set<string>, signal?: AbortSignal): Promise<{ paths: string[], lowerBound: boolean } | undefined> {
  const free: Required<SearchRequest> = { ...req, respectGitignore: false }
  const paths: string[] = []
  const r = await ctx.run({
    target: { ...target, args: [] },
    args: [...baseArgs(free, target.named), '--files-with-matches', '--null', '--with-filename', '--', ...target.paths],
    separator: 0,
    onRecord: record => {
      // ripgrep never writes two NULs in a row; an empty record must still not count as a hidden file.
      /* c8 ignore next */
      if (record.length === 0) return true
      const file = target.toRelative(displayPath(record))
      if (!found.has(file)) paths.push(file)
      return paths.length < MAX_HIDDEN_PROBED
    },
    signal
  })
  const verdict = inspectRun(r, req.pattern, [], { json: false, sawSummary: false, timeoutMs: ctx.timeoutMs, signal })
  if (verdict.failed !== undefined) return undefined
  paths.sort(compareText)
  return { paths, lowerBound: verdict.partial || r.end === 'stopped' }
}
