import { createReadStream } from 'node:fs'
import { open } from 'node:fs/promises'
import { Readable } from 'node:stream'
import type { SearchRequest } from './types.js'
import type { PassContext } from './pass-context.js'
import { failedRun, inspectRun } from './inspect.js'
import type { FetchedWindows, FileWindow, WindowWant } from './set.js'
import type { LongRecordSink } from './rg.js'
import type { SearchTarget } from './target.js'
import { cutOf, windowCollector } from './window.js'

/** Where a window starts in its file: the byte offset and number of its first line, and the matches before its first wanted one. */
interface Start {
  offset: number
  line: number
  before: number
}

/** The place of one line of `rg --line-number --byte-offset` output: `line:offset:` for a match, `line-offset-` for context. */
interface Place { line: number, offset: number, match: boolean }

const PLACE = /^(\d+)([:-])(\d+)\2/
/** Bytes of a record that hold its place (two numbers below 2^53 and two separators). */
const PLACE_BYTES = 48

const placeOf = (head: Buffer): Place | undefined => {
  const m = PLACE.exec(head.subarray(0, PLACE_BYTES).toString('latin1'))
  return m === null ? undefined : { line: Number(m[1]), offset: Number(m[3]), match: m[2] === ':' }
}

/** Byte order marks of UTF-16 (LE, BE) and UTF-8. */
const BOMS = [[0xff, 0xfe], [0xfe, 0xff], [0xef, 0xbb, 0xbf]].map(b => Buffer.from(b))

/** True when the file starts with a byte order mark: ripgrep transcodes it, so its offsets are not the file's. */
async function hasBom (file: string): Promise<boolean> {
  const handle = await open(file, 'r')
  try {
    const { bytesRead, buffer } = await handle.read(Buffer.alloc(3), 0, 3, 0)
    return BOMS.some(bom => buffer.subarray(0, Math.min(bytesRead, bom.length)).equals(bom))
  } finally {
    await handle.close()
  }
}

/**
 * Finds where a window starts with ripgrep's plain output, which costs a twentieth of its JSON per match: it stops
 * at the window's first wanted match (`--max-count`) and the last lines it printed (that match and the context
 * before it) give the first line's byte offset. Undefined when the output is not what it should be (binary data,
 * the file changed): the caller reads the file from its start instead.
 */
async function locate (ctx: PassContext, plain: string[], req: Required<SearchRequest>, target: SearchTarget, want: WindowWant, signal?: AbortSignal): Promise<Start | undefined> {
  const context = req.contextLines
  const tail: Place[] = []
  let matches = 0
  const take = (head: Buffer): boolean => {
    const place = placeOf(head)
    // Anything else (ripgrep's "binary file matches" line) stops the run: not seekable.
    if (place === undefined) return false
    if (place.match) matches++
    tail.push(place)
    if (tail.length > context + 1) tail.shift()
    return true
  }
  const args = [...plain, '--line-number', '--byte-offset', '--no-filename', '--no-heading', '--no-context-separator',
    '--max-count', String(want.from + 1), '--before-context', String(context), '--', ...target.paths]
  const r = await ctx.run({
    target,
    args,
    separator: 10,
    onRecord: take,
    onLongRecord: (): LongRecordSink => {
      let head = Buffer.alloc(0)
      return { push: (piece) => { if (head.length < PLACE_BYTES) head = Buffer.concat([head, piece]) }, end: () => take(head) }
    },
    signal
  })
  const verdict = inspectRun(r, req.pattern, [], { json: false, sawSummary: false, timeoutMs: ctx.timeoutMs, signal })
  if (r.end !== 'exit' || verdict.failed !== undefined || matches !== want.from + 1) return undefined
  const hit = tail[tail.length - 1]
  const first = tail.find(p => p.line >= hit.line - context) as Place
  return { offset: first.offset, line: first.line, before: tail.filter(p => p.match && p.line >= first.line).length - 1 }
}

/** The file from `start` on, ending early (and saying so) at a NUL byte or a read error. */
function fileFrom (file: string, start: number, stop: () => void): Readable {
  async function * bytes (): AsyncGenerator<Buffer> {
    try {
      for await (const chunk of createReadStream(file, { start }) as AsyncIterable<Buffer>) {
        // ripgrep reads NUL bytes in a file it was named and in its stdin differently (a line more on stdin).
        if (chunk.includes(0)) return stop()
        yield chunk
      }
    } catch /* c8 ignore start */ {
      // The file is pinned and open: reading it fails only on an I/O error, which no test can cause.
      stop()
    } /* c8 ignore stop */
  }
  return Readable.from(bytes())
}

/**
 * The window of a named file's page far into its matches, without ripgrep's JSON for every match before it: a plain
 * run finds where the window starts, then ripgrep reads the file from there on its stdin. Undefined when that cannot
 * be trusted (another encoding, a byte order mark, binary data, a changed file): read the file from its start.
 */
export async function seekWindow (ctx: PassContext, args: { plain: string[], json: string[] }, req: Required<SearchRequest>, target: SearchTarget, want: WindowWant, signal?: AbortSignal): Promise<FetchedWindows | undefined> {
  const file = target.paths[0]
  if (target.args.length > 0 || await hasBom(file)) return undefined
  const start = await locate(ctx, args.plain, req, target, want, signal)
  if (start === undefined) return undefined
  const stage = windowCollector(() => want.entry.path, [{ entry: want.entry, from: start.before, to: start.before + want.to - want.from }], req.contextLines, ctx.maxPageBytes)
  const halt = new AbortController()
  let untrusted = false
  const input = fileFrom(file, start.offset, () => {
    untrusted = true
    halt.abort()
  })
  const r = await ctx.run({
    target,
    args: [...args.json, '--', '-'],
    separator: 10,
    onRecord: stage.onRecord,
    onLongRecord: stage.onLongRecord,
    input,
    signal: AbortSignal.any([halt.signal, ...(signal === undefined ? [] : [signal])])
  })
  if (untrusted) return undefined
  const verdict = inspectRun(r, req.pattern, [], { json: r.end === 'exit', sawSummary: stage.sawSummary, timeoutMs: ctx.timeoutMs, signal })
  if (verdict.failed !== undefined) failedRun(verdict.failed, 0, [])
  const cut = cutOf(r.end, stage.overBudget)
  const got = stage.windows(r.end === 'exit').get(want.entry) as FileWindow
  // ripgrep numbered the lines from the window's first; the matches before it are the page's to count.
  const window = { ...got, first: got.first + want.from - start.before, lines: got.lines.map(l => ({ ...l, line: l.line + start.line - 1 })) }
  return { windows: new Map([[want.entry, window]]), ...(cut === undefined ? {} : { cut }) }
}
