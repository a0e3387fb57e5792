import type { FileHandle } from 'node:fs/promises'
import { charsetTools, detectCharset } from './charset.js'

/** Bytes inspected for the binary check (ripgrep's rule: a NUL byte means binary). */
export const SNIFF_BYTES = 8192
const CHUNK_BYTES = 1024 * 1024

/** What the first bytes of a file say about it. */
export interface FileSniff {
  binary: boolean
  /** How lines are found: byte-wise (UTF-8 and every ASCII-compatible charset) or by 16-bit code units. */
  encoding: 'utf8' | 'utf16le' | 'utf16be'
  /** A legacy charset the text is decoded from (Shift_JIS, GB18030, windows-1252 …) instead of UTF-8. */
  charset?: string
  /** True when `charset` was guessed from the bytes (false: the caller named it). */
  detected?: boolean
  /** The first bytes (at most 8 KiB) as sniffed: what a caller that recognises a binary format looks at. */
  head: Buffer
}

/**
 * Looks at the first 8 KiB: a UTF-16 BOM means text, otherwise any NUL means binary. Text that is not valid
 * UTF-8 is given to a charset detector; its answer is kept when iconv-lite can decode it.
 */
export async function sniffFile (handle: FileHandle): Promise<FileSniff> {
  const buf = Buffer.alloc(SNIFF_BYTES)
  const { bytesRead } = await handle.read(buf, 0, SNIFF_BYTES, 0)
  const head = buf.subarray(0, bytesRead)
  if (head[0] === 0xff && head[1] === 0xfe) return { binary: false, encoding: 'utf16le', head }
  if (head[0] === 0xfe && head[1] === 0xff) return { binary: false, encoding: 'utf16be', head }
  if (head.includes(0)) return { binary: true, encoding: 'utf8', head }
  const charset = await detectCharset(head.subarray(0, bytesRead === SNIFF_BYTES ? utf8Boundary(head) : bytesRead))
  return charset === undefined ? { binary: false, encoding: 'utf8', head } : { binary: false, encoding: 'utf8', charset, detected: true, head }
}

/** A window of lines out of a file. */
export interface LineWindow {
  /** The lines, without their line terminators; a line over LINE_KEEP_BYTES holds only its first bytes. */
  lines: string[]
  /** 1-based number of lines[0] (when lines is empty: where the window would have started). */
  first: number
  /** Lines in the whole file. */
  totalLines: number
  /** True when some bytes of the kept text were not valid UTF-8 (shown as U+FFFD). */
  invalidUtf8: boolean
  /** Lines kept only in part: index in `lines` → the whole line's length in bytes (absent when none was cut). */
  longLines?: Map<number, number>
}

/** Which lines to take: `start` 1-based (negative counts from the end), `end` inclusive, at most `maxLines`. */
export interface WindowRequest {
  start: number
  end?: number
  maxLines: number
  signal?: AbortSignal
}

/**
 * Bytes kept of any one line; the rest is only counted, so a 100 MB line costs this much memory. At most 3
 * bytes per UTF-16 code unit, so the kept text always reaches past the 2,000-character display cut.
 */
export const LINE_KEEP_BYTES = 8192

type Encoding = FileSniff['encoding']

const NEWLINE: Record<Encoding, Buffer> = { utf8: Buffer.from([10]), utf16le: Buffer.from([10, 0]), utf16be: Buffer.from([0, 10]) }

/** Offset of the next line feed at or after `at` (a whole code unit: UTF-16 line feeds sit at even offsets), or -1. */
function nextNewline (chunk: Buffer, at: number, encoding: Encoding): number {
  if (encoding === 'utf8') return chunk.indexOf(10, at)
  for (let i = chunk.indexOf(NEWLINE[encoding], at); i !== -1; i = chunk.indexOf(NEWLINE[encoding], i + 1)) {
    if ((i - at) % 2 === 0) return i
  }
  return -1
}

/** End of the last whole UTF-8 character in `raw` (a cut must not leave half a character to show as U+FFFD). */
function utf8Boundary (raw: Buffer): number {
  let lead = raw.length - 1
  while (lead > 0 && raw.length - lead < 4 && (raw[lead] & 0xc0) === 0x80) lead--
  const b = raw[lead]
  const need = b < 0x80 ? 1 : (b & 0xe0) === 0xc0 ? 2 : (b & 0xf0) === 0xe0 ? 3 : (b & 0xf8) === 0xf0 ? 4 : 1
  return raw.length - lead < need ? lead : raw.length
}

interface KeptLine { parts: Buffer[], kept: number, full: number }

/** Decodes a kept line: cut on a character boundary when it is partial, CR stripped when it is whole. */
function decodeLine (line: KeptLine, encoding: Encoding, legacy: { charset: string, decode: (bytes: Buffer, charset: string) => string } | undefined): { text: string, invalid: boolean } {
  let raw = Buffer.concat(line.parts, line.kept)
  const cut = line.full > line.kept
  let text: string
  let invalid = false
  if (legacy !== undefined) {
    // A cut can split a multi-byte character: its lead byte alone decodes as a replacement character, dropped.
    text = legacy.decode(raw, legacy.charset)
    if (cut && text.endsWith('\uFFFD')) text = text.slice(0, -1)
  } else if (encoding === 'utf8') {
    if (cut) raw = raw.subarray(0, utf8Boundary(raw))
    text = raw.toString('utf8')
    invalid = text.includes('\uFFFD') && !Buffer.from(text).equals(raw)
  } else {
    raw = Buffer.from(raw.subarray(0, raw.length & ~1))
    text = (encoding === 'utf16be' ? raw.swap16() : raw).toString('utf16le')
    const last = text.charCodeAt(text.length - 1)
    if (cut && last >= 0xd800 && last <= 0xdbff) text = text.slice(0, -1)
  }
  if (!cut && text.endsWith('\r')) text = text.slice(0, -1)
  return { text, invalid }
}

/**
 * One streaming pass: counts lines and keeps lines `from`..`to` (at most LINE_KEEP_BYTES of each). Stops
 * after `to` when `stopAfterWindow` (the total is known), and throws the signal's reason when it aborts.
 */
async function scanLines (handle: FileHandle, size: number, encoding: Encoding, window: { from: number, to: number, stopAfterWindow: boolean } | undefined, signal?: AbortSignal): Promise<{ total: number, kept: KeptLine[] }> {
  const unit = encoding === 'utf8' ? 1 : 2
  // No bigger than the file (a snippet of a 5 KB file zero-filled a 1 MB buffer: 4 ms of a search_code call), and
  // unfilled: only the bytes a read put there are looked at, and kept lines are copied out.
  const buf = Buffer.allocUnsafe(Math.min(CHUNK_BYTES, Math.max(size, 1)))
  const kept: KeptLine[] = []
  const from = window?.from ?? Infinity
  const to = window?.to ?? 0
  let position = unit === 2 ? 2 : 0
  let line = 1
  let lineBytes = 0
  let current: KeptLine | undefined
  while (position < size) {
    signal?.throwIfAborted()
    const { bytesRead } = await handle.read(buf, 0, Math.min(buf.length, size - position), position)
    if (bytesRead === 0) break
    // A UTF-16 chunk must end on a code unit (only the file's very last byte may be odd).
    const n = unit === 2 && bytesRead % 2 === 1 && bytesRead > 1 && position + bytesRead < size ? bytesRead - 1 : bytesRead
    const chunk = buf.subarray(0, n)
    position += n
    let at = 0
    while (at < n) {
      const nl = nextNewline(chunk, at, encoding)
      const end = nl === -1 ? n : nl
      lineBytes += end - at
      if (line >= from && line <= to) {
        current ??= { parts: [], kept: 0, full: 0 }
        current.full += end - at
        const take = Math.min(LINE_KEEP_BYTES - current.kept, end - at)
        if (take > 0) {
          current.parts.push(Buffer.from(chunk.subarray(at, at + take)))
          current.kept += take
        }
      }
      if (nl === -1) break
      if (current !== undefined) kept.push(current)
      current = undefined
      line++
      lineBytes = 0
      at = nl + unit
      if (window?.stopAfterWindow === true && line > to) return { total: line - 1, kept }
    }
  }
  // A last line without a line feed counts (a lone odd byte at the end of UTF-16 does not).
  const total = lineBytes >= unit ? line : line - 1
  if (current !== undefined && lineBytes >= unit) kept.push(current)
  return { total, kept }
}

/** First and last (1-based, inclusive) line of a window, given the total: start < 0 counts from the end. */
export function windowBounds (req: Omit<WindowRequest, 'signal'>, total: number): { from: number, to: number } {
  const from = req.start < 0 ? Math.max(1, total + req.start + 1) : Math.max(1, req.start)
  const last = req.end === undefined ? total : Math.min(total, req.end)
  return { from, to: Math.min(last, from + req.maxLines - 1) }
}

/**
 * Reads a window of lines by streaming the file in 1 MB chunks: only lines inside the window are kept (each
 * up to LINE_KEEP_BYTES) and decoded, so memory does not grow with the file or with its longest line.
 * One pass for a window from the start; a window counted from the end first counts the lines.
 */
export async function readLineWindow (handle: FileHandle, size: number, sniff: FileSniff, req: WindowRequest): Promise<LineWindow> {
  if (req.start === 1 && req.end === undefined && req.maxLines > size && size <= WHOLE_READ_BYTES && sniff.encoding === 'utf8' && sniff.charset === undefined) {
    const whole = await readWholeUtf8(handle, size, req.signal)
    if (whole !== undefined) return whole
  }
  let from: number
  let to: number
  let scan: { total: number, kept: KeptLine[] }
  if (req.start < 0) {
    const total = (await scanLines(handle, size, sniff.encoding, undefined, req.signal)).total
    ;({ from, to } = windowBounds(req, total))
    scan = { total, kept: (await scanLines(handle, size, sniff.encoding, { from, to, stopAfterWindow: true }, req.signal)).kept }
  } else {
    from = Math.max(1, req.start)
    to = from + req.maxLines - 1
    if (req.end !== undefined) to = Math.min(to, req.end)
    scan = await scanLines(handle, size, sniff.encoding, { from, to, stopAfterWindow: false }, req.signal)
  }
  const lines: string[] = []
  const longLines = new Map<number, number>()
  let invalidUtf8 = false
  const legacy = sniff.charset === undefined ? undefined : { charset: sniff.charset, decode: (await charsetTools()).decode }
  for (const line of scan.kept) {
    const { text, invalid } = decodeLine(line, sniff.encoding, legacy)
    if (invalid) invalidUtf8 = true
    if (line.full > line.kept) longLines.set(lines.length, line.full)
    lines.push(text)
  }
  return { lines, first: from, totalLines: scan.total, invalidUtf8, ...(longLines.size > 0 ? { longLines } : {}) }
}

/** A UTF-8 file up to this size asked for whole is read in one piece and decoded once (outlines, whole reads). */
const WHOLE_READ_BYTES = CHUNK_BYTES

/**
 * Every line of a UTF-8 file, read in one piece and decoded once — what the streaming pass gives, without a buffer
 * and a decode per line (a 5,300-line file: ~25 ms of a first outline, before the JIT has warmed that pass). A
 * line longer than LINE_KEEP_BYTES (minified code) returns undefined: the streaming pass keeps its first bytes.
 */
async function readWholeUtf8 (handle: FileHandle, size: number, signal?: AbortSignal): Promise<LineWindow | undefined> {
  signal?.throwIfAborted()
  const raw = Buffer.allocUnsafe(size)
  let filled = 0
  while (filled < size) {
    const { bytesRead } = await handle.read(raw, filled, size - filled, filled)
    if (bytesRead === 0) break
    filled += bytesRead
  }
  const bytes = raw.subarray(0, filled)
  const text = bytes.toString('utf8')
  const lines = text.split('\n')
  // A last line counts only when it holds something: a line feed ends the line before it.
  if (lines.at(-1) === '') lines.pop()
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]
    // At most 3 bytes per UTF-16 code unit: only a line that long can be over the limit.
    if (line.length * 3 > LINE_KEEP_BYTES && Buffer.byteLength(line) > LINE_KEEP_BYTES) return undefined
    if (line.endsWith('\r')) lines[i] = line.slice(0, -1)
  }
  return { lines, first: 1, totalLines: lines.length, invalidUtf8: text.includes('\uFFFD') && !Buffer.from(text).equals(bytes) }
}

/** Counts lines by scanning for line feeds in 1 MB chunks (a last line without one counts); stops on abort. */
export async function countLines (handle: FileHandle, size: number, signal?: AbortSignal, encoding: Encoding = 'utf8'): Promise<number> {
  try {
    return (await scanLines(handle, size, encoding, undefined, signal)).total
  } catch (err) {
    // The caller's deadline has passed: the count is not used, so a partial one is as good as any.
    if (signal?.aborted === true) return 0
    throw err
  }
}
