import type { SearchMode, SearchRequest } from './types.js'
import { compareText } from '../compare-text.js'
import { countRecordParser, displayPath } from './parse.js'
import { failedRun, inspectRun } from './inspect.js'
import { makeSet, type FetchedWindows, type FileEntry, type ResultSet, type WindowWant } from './set.js'
import { cutOf, windowCollector } from './window.js'
import { seekWindow } from './seek.js'
import type { SearchTarget } from './target.js'
import type { PassContext } from './pass-context.js'
import type { PinnedPath } from '../workspace/index.js'

const MAX_FILE_SIZE = '10M'
const MAX_NAMED_FILE_SIZE = '100M'
const byPath = (a: { path: string }, b: { path: string }): number => compareText(a.path, b.path)

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

/**
 * Content mode: the matching files are counted (`--count`, the least ripgrep can do over a tree: no line leaves it,
 * nothing is parsed but a name and a number per file), and a page reads its own windows of lines (fetchWindows).
 * Printing every match as JSON cost ripgrep a tenth more and this server a quarter of that again to parse, for
 * lines no page would show.
 */
export async function searchContent (ctx: PassContext, req: Required<SearchRequest>, target: SearchTarget, signal?: AbortSignal): Promise<ResultSet> {
  const json = [...baseArgs(req, target.named), '--json']
  if (req.contextLines > 0) json.push('--context', String(req.contextLines))
  const set = await listFiles(ctx, req, target, 'content', signal)
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
  // A name that cannot be an argument (not UTF-8) is passed as the file pinned through the jail, by its /proc path.
  const pins = new Map<string, { pin: PinnedPath, path: string }>()
  try {
    const operands: string[] = []
    for (const { entry } of wants) {
      let operand = target.operand(entry.path)
      if (operand === undefined) {
        const pin = await ctx.pinFile(entry.path)
        // A file that can no longer be pinned keeps an empty window (the page's re-check drops it).
        if (pin === undefined) continue
        pins.set(pin.procPath, { pin, path: entry.path })
        operand = pin.procPath
      }
      operands.push(operand)
    }
    const toRelative = (shown: string): string => pins.get(shown)?.path ?? target.toRelative(shown)
    const stage = windowCollector(toRelative, wants, req.contextLines, ctx.maxPageBytes)
    // With nothing to run (no file could be named), every window is complete, and empty.
    if (operands.length === 0) return { windows: stage.windows(true) }
    // For a folder the operands are relative to it; ripgrep prints them back as given (`./x`). One thread reads them
    // in the page's order, so a read cut short (budget, deadline) has read the page's first files, not its last.
    const r = await ctx.run({ target, args: [...json, '--threads', '1', '--', ...operands], separator: 10, onRecord: stage.onRecord, onLongRecord: stage.onLongRecord, signal })
    const verdict = inspectRun(r, req.pattern, [], { json: r.end === 'exit', sawSummary: stage.sawSummary, timeoutMs: ctx.timeoutMs, signal })
    if (verdict.failed !== undefined) failedRun(verdict.failed, 0, [])
    const cut = cutOf(r.end, stage.overBudget)
    return { windows: stage.windows(r.end === 'exit'), ...(cut === undefined ? {} : { cut }) }
  } finally {
    for (const { pin } of pins.values()) await pin.close()
  }
}

/** Files and count modes: `--files-with-matches` or `--count`, paths only. */
export async function searchFiles (ctx: PassContext, req: Required<SearchRequest>, target: SearchTarget, signal?: AbortSignal): Promise<ResultSet> {
  return await listFiles(ctx, req, target, req.mode, signal)
}

/** The matching files, each with its count of matching lines (count and content modes), or not (files mode). */
async function listFiles (ctx: PassContext, req: Required<SearchRequest>, target: SearchTarget, mode: SearchMode, signal?: AbortSignal): Promise<ResultSet> {
  const notices: string[] = []
  const files: FileEntry[] = []
  const count = mode !== 'files'
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
  return makeSet(mode, files, {
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
