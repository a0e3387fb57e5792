import { beginPath, isSummaryRecord, parseLine, recordKind, type SearchLine } from './parse.js'
import { createLongRecordScanner } from './long-line.js'
import { lineWeight, type FileEntry, type FileWindow, type PageCut, type WindowWant } from './set.js'
import type { LongRecordSink, RgEnd } from './rg.js'

/** A line as it arrived: the raw record (parsed only if it is kept) or a long record already scanned. */
type Arrived = Buffer | SearchLine

/** Where the read of one file stands. */
interface Cursor {
  want: WindowWant
  window: FileWindow
  /** Matching lines seen so far in the file. */
  seen: number
  /** The last `context` lines before the window (one of them may be its first line's context). */
  ring: Arrived[]
  /** Line number of the last wanted match kept. */
  hit: number
  /** Set once no more matches are wanted: the line of the last one kept, whose context below is all that is read. */
  last?: number
  /** Lines still to read below `last`. */
  after: number
}

/** Collects, from `rg --json --context N` over some files, only the windows a page needs. */
export interface WindowCollector {
  onRecord(record: Buffer): boolean
  onLongRecord(): LongRecordSink
  /** True once ripgrep's closing summary came (a complete run). */
  readonly sawSummary: boolean
  /** True when the windows would have held more than the page's byte budget: the read stopped there. */
  readonly overBudget: boolean
  /** The windows, one per file asked for; whole where the file was read to its window's end, or everywhere when the run was complete. */
  windows(complete: boolean): Map<FileEntry, FileWindow>
}

/**
 * A collector over ripgrep's output that keeps, per file, only the lines from the context before its first wanted
 * match to the context after its last: the matches before are counted from their first bytes (never parsed), and
 * the `contextLines` lines before the window wait in a small ring. So a page of a file with millions of matches
 * holds a page, whatever its offset. ripgrep writes each file's output whole (begin … end), which tells whose
 * lines these are. It asks to stop when every window is complete, or once the kept lines pass `maxBytes`: then
 * after the context below the last match kept (at most `contextLines` more), so that match is whole and a cut
 * page always shows at least its first one.
 */
export function windowCollector (toRelative: (shown: string) => string, wants: WindowWant[], contextLines: number, maxBytes: number): WindowCollector {
  const cursors = new Map<string, Cursor>(wants.map(want => [want.entry.path, { want, window: { first: 0, lines: [], whole: false }, seen: 0, ring: [], hit: 0, after: 0 }]))
  let open = cursors.size
  let current: Cursor | undefined
  let held = 0
  let sawSummary = false
  let overBudget = false

  const lineOf = (arrived: Arrived): SearchLine | undefined => {
    if (!Buffer.isBuffer(arrived)) return arrived
    try {
      return parseLine(arrived, recordKind(arrived) === 'match')
    } catch {
      // Not ripgrep's JSON (a stray line on its stdout): skipped, the lines around it stand.
      return undefined
    }
  }
  const keep = (c: Cursor, line: SearchLine): void => {
    c.window.lines.push(line)
    held += lineWeight(line)
  }
  /** The file's output ended, or its window did: it is whole. False stops the run. */
  const finish = (c: Cursor): boolean => {
    c.window.whole = true
    c.ring = []
    if (c === current) current = undefined
    open--
    return open > 0 && !overBudget
  }
  /** The context below the last match kept is read: the window is whole, or (over budget) the page stops here. */
  const close = (c: Cursor): boolean => overBudget ? false : finish(c)

  /** One match or context line of the current file; false stops the run. */
  const step = (c: Cursor, arrived: Arrived, match: boolean): boolean => {
    if (c.last !== undefined) {
      const line = lineOf(arrived)
      if (line === undefined) return true
      if (line.line > c.last + contextLines) return close(c)
      keep(c, line)
      return --c.after === 0 ? close(c) : true
    }
    const index = match ? c.seen++ : -1
    if (c.window.lines.length === 0 && index < c.want.from) {
      if (contextLines > 0) {
        c.ring.push(arrived)
        if (c.ring.length > contextLines) c.ring.shift()
      }
      return true
    }
    const line = lineOf(arrived)
    if (line === undefined) return true
    if (c.window.lines.length === 0) {
      // The first wanted match: the ring's lines within reach are its context (matches among them come first).
      c.window.first = index
      for (const before of c.ring.map(lineOf)) {
        if (before === undefined || before.line < line.line - contextLines) continue
        keep(c, before)
        if (before.match) c.window.first--
      }
      c.ring = []
    }
    keep(c, line)
    if (match) c.hit = line.line
    const last = index === c.want.to - 1
    if (!last && held <= maxBytes) return true
    // No more matches wanted (the last one, or the budget is spent): read the context below the last one kept.
    overBudget ||= !last
    c.last = c.hit
    c.after = contextLines - (line.line - c.hit)
    return c.after <= 0 ? close(c) : true
  }

  /** The open cursor of the file a begin event starts, if the page wants it. */
  const cursorOf = (record: Buffer): Cursor | undefined => {
    let shown: string
    try {
      shown = beginPath(record)
    } catch {
      // Not ripgrep's JSON: the lines that follow are nobody's.
      return undefined
    }
    const c = cursors.get(toRelative(shown))
    return c?.window.whole === false ? c : undefined
  }

  const onRecord = (record: Buffer): boolean => {
    const kind = recordKind(record)
    if (kind === 'match' || kind === 'context') return current === undefined || step(current, record, kind === 'match')
    if (kind === 'begin') {
      current = cursorOf(record)
    } else if (kind === 'end') {
      // The file ended before its window did (it changed since it was counted, or its last lines are the window's).
      if (current !== undefined) return finish(current)
    } else if (isSummaryRecord(record)) {
      sawSummary = true
    }
    return true
  }

  return {
    onRecord,
    onLongRecord () {
      const scanner = createLongRecordScanner()
      return {
        push: (piece) => { if (current !== undefined) scanner.push(piece) },
        end () {
          const ev = current === undefined ? undefined : scanner.end()
          return ev === undefined || ev.type !== 'line' || current === undefined ? true : step(current, ev.line, ev.line.match)
        }
      }
    },
    get sawSummary () { return sawSummary },
    get overBudget () { return overBudget },
    windows: (complete) => new Map([...cursors.values()].map(c => [c.want.entry, { ...c.window, whole: c.window.whole || complete }]))
  }
}

/** Why a read of windows was cut short, from how its run ended and whether it passed its budget; undefined when it was not. */
export function cutOf (end: RgEnd, overBudget: boolean): PageCut | undefined {
  if (end === 'deadline' || end === 'shutdown') return end
  return overBudget ? 'budget' : undefined
}
