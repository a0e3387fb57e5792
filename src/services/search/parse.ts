import { displayName, displayText } from '../workspace/index.js'

/** Longest line kept from ripgrep, in characters; the rest is cut and counted. */
export const MAX_LINE_CHARS = 2000

/** One line of a search result (a match or a context line), possibly cut. */
export interface SearchLine {
  /** 1-based line number. */
  line: number
  /** The kept text (no line terminator); at most MAX_LINE_CHARS characters. */
  text: string
  /** Character offset of `text` in the full line (non-zero when the start was cut to show the match). */
  start: number
  /** Length of the full line in characters. */
  length: number
  /** True for a matching line, false for a context line. */
  match: boolean
}

/** A decoded ripgrep JSON event we care about. */
export type RgEvent =
  | { type: 'line', path: string, line: SearchLine }
  | { type: 'end', path: string, matchedLines: number }
  | { type: 'other' }

interface RgText { text?: string, bytes?: string }

/**
 * Turns a ripgrep path (`./x` when the search root was `.`) into a display path relative to ripgrep's cwd.
 * Every form (raw bytes, JSON `text` or `bytes`) goes through the one safe text form of a name, so a name
 * holding a newline or an escape sequence cannot forge a line of output.
 */
export function displayPath (raw: RgText | Buffer): string {
  let p: string
  if (Buffer.isBuffer(raw)) p = displayName(raw)
  else if (raw.text !== undefined) p = displayText(raw.text)
  else p = displayName(Buffer.from(raw.bytes ?? '', 'base64'))
  return p.startsWith('./') ? p.slice(2) : p
}

function lineText (raw: RgText): string {
  const text = raw.text ?? Buffer.from(raw.bytes ?? '', 'base64').toString('utf8')
  if (text.endsWith('\r\n')) return text.slice(0, -2)
  if (text.endsWith('\n')) return text.slice(0, -1)
  return text
}

/** Cuts a long line to MAX_LINE_CHARS, keeping a window around the first match (byte offset `at`). */
export function cutLine (full: string, at: number | undefined): { text: string, start: number } {
  if (full.length <= MAX_LINE_CHARS) return { text: full, start: 0 }
  let matchChar = 0
  if (at !== undefined && at > 0) matchChar = Buffer.from(full).subarray(0, at).toString('utf8').length
  const start = matchChar < MAX_LINE_CHARS - 200 ? 0 : Math.min(matchChar - 200, full.length - MAX_LINE_CHARS)
  return { text: full.slice(start, start + MAX_LINE_CHARS), start }
}

const SUMMARY = Buffer.from('{"data":{"elapsed_total"')

/** True for the `summary` event ripgrep writes last when a `--json` run completes (its absence means a cut run). */
export function isSummaryRecord (record: Buffer): boolean {
  // ripgrep 15 writes the summary's data first; the type-first form is the other order JSON allows.
  return record.subarray(0, SUMMARY.length).equals(SUMMARY) || recordKind(record) === 'summary'
}

/** The kind of a `rg --json` line, read from its first bytes. */
export type RecordKind = 'begin' | 'match' | 'context' | 'end' | 'summary' | 'other'

const TYPE_KEY = Buffer.from('{"type":"')
const KIND_WORDS: Array<[RecordKind, Buffer]> = (['begin', 'match', 'context', 'end', 'summary'] as const).map(kind => [kind, Buffer.from(`${kind}"`)])

/** The kind of a `rg --json` line, by comparing bytes in place (no allocation: this runs once per line of a possibly huge stream). */
export function recordKind (record: Buffer): RecordKind {
  if (record.compare(TYPE_KEY, 0, TYPE_KEY.length, 0, Math.min(record.length, TYPE_KEY.length)) !== 0) return 'other'
  const at = TYPE_KEY.length
  for (const [kind, word] of KIND_WORDS) {
    if (record.length >= at + word.length && record.compare(word, 0, word.length, at, at + word.length) === 0) return kind
  }
  return 'other'
}

/** Parses one `rg --json` line; begin/summary events are skipped without parsing. */
export function parseRgJson (record: Buffer): RgEvent {
  const kind = recordKind(record)
  if (kind === 'match' || kind === 'context') return { type: 'line', ...lineEvent(record, kind === 'match') }
  if (kind !== 'end') return { type: 'other' }
  const end = JSON.parse(record.toString('utf8')) as { data: { path: RgText, stats?: { matched_lines?: number } } }
  return { type: 'end', path: displayPath(end.data.path), matchedLines: end.data.stats?.matched_lines ?? 0 }
}

/** The line of a `match` or `context` record whose kind the caller has read; throws when the record is not JSON. */
export function parseLine (record: Buffer, match: boolean): SearchLine {
  return lineEvent(record, match).line
}

function lineEvent (record: Buffer, match: boolean): { path: string, line: SearchLine } {
  const event = JSON.parse(record.toString('utf8')) as {
    data: { path: RgText, lines: RgText, line_number: number | null, submatches?: Array<{ start: number }> }
  }
  const d = event.data
  const full = lineText(d.lines)
  const { text, start } = cutLine(full, d.submatches?.[0]?.start)
  return { path: displayPath(d.path), line: { line: d.line_number ?? 0, text, start, length: full.length, match } }
}

/** The display path of a `begin` event (a file's output starts with it); throws when the record is not JSON. */
export function beginPath (record: Buffer): string {
  return displayPath((JSON.parse(record.toString('utf8')) as { data: { path: RgText } }).data.path)
}

/** Splits a `--null` record of `rg --count` (`path\0count`, NUL present) into its parts; undefined for a count that is not a number. */
function parseCountRecord (record: Buffer): { path: string, count: number } | undefined {
  const nul = record.lastIndexOf(0)
  const count = Number(record.subarray(nul + 1).toString('ascii'))
  if (!Number.isFinite(count)) return undefined
  return { path: displayPath(record.subarray(0, nul)), count }
}

/**
 * A parser of `rg --count --null` records split at '\n': a name holding a newline arrives in pieces (no NUL
 * yet), which are joined back before the `path\0count` split (a count never holds a newline).
 */
export function countRecordParser (): (record: Buffer) => { path: string, count: number } | undefined {
  let pending: Buffer[] = []
  return (record) => {
    if (record.indexOf(0) === -1) {
      pending.push(record, Buffer.from('\n'))
      return undefined
    }
    const whole = pending.length === 0 ? record : Buffer.concat([...pending, record])
    pending = []
    return parseCountRecord(whole)
  }
}
