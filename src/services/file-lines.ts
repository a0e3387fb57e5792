import type { FileHandle } from 'node:fs/promises'

/** Bytes inspected for the binary check (ripgrep's rule: a NUL byte means binary). */
export const SNIFF_BYTES = 8192
/** Files up to this size are read whole; larger ones are streamed. */
export const WHOLE_READ_BYTES = 10 * 1024 * 1024
const CHUNK_BYTES = 1024 * 1024

/** What the first bytes of a file say about it. */
export interface FileSniff {
  binary: boolean
  encoding: 'utf8' | 'utf16le' | 'utf16be'
}

/** Looks at the first 8 KiB: a UTF-16 BOM means text, otherwise any NUL means binary. */
export async function sniffFile (handle: FileHandle): Promise<FileSniff> {
  const buf = Buffer.alloc(SNIFF_BYTES)
  const { bytesRead } = await handle.read(buf, 0, SNIFF_BYTES, 0)
  const head = buf.subarray(0, bytesRead)
  if (head[0] === 0xff && head[1] === 0xfe) return { binary: false, encoding: 'utf16le' }
  if (head[0] === 0xfe && head[1] === 0xff) return { binary: false, encoding: 'utf16be' }
  return { binary: head.includes(0), encoding: 'utf8' }
}

/** A window of lines out of a file. */
export interface LineWindow {
  /** The lines, without their line terminators. */
  lines: string[]
  /** 1-based number of lines[0] (when lines is empty: where the window would have started). */
  first: number
  /** Lines in the whole file. */
  totalLines: number
  /** True when some bytes were not valid UTF-8 (shown as U+FFFD). */
  invalidUtf8: boolean
}

/** Which lines to take: `start` 1-based (negative counts from the end), `end` inclusive, at most `maxLines`. */
export interface WindowRequest {
  start: number
  end?: number
  maxLines: number
  signal?: AbortSignal
}

function decode (buf: Buffer, encoding: FileSniff['encoding']): string {
  if (encoding === 'utf16le') return buf.subarray(2).toString('utf16le')
  if (encoding === 'utf16be') {
    const swapped = Buffer.from(buf.subarray(2, 2 + ((buf.length - 2) & ~1)))
    return swapped.swap16().toString('utf16le')
  }
  return buf.toString('utf8')
}

/** First and last (1-based, inclusive) line of the window, given the file's total. */
function bounds (req: WindowRequest, total: number): { from: number, to: number } {
  const from = req.start < 0 ? Math.max(1, total + req.start + 1) : Math.max(1, req.start)
  const last = req.end === undefined ? total : Math.min(total, req.end)
  return { from, to: Math.min(last, from + req.maxLines - 1) }
}

/** Reads a window of lines: whole-file decode up to 10 MB, a streaming scan beyond (never loading it whole). */
export async function readLineWindow (handle: FileHandle, size: number, sniff: FileSniff, req: WindowRequest): Promise<LineWindow> {
  if (size <= WHOLE_READ_BYTES) {
    const buf = await handle.readFile()
    const text = decode(buf, sniff.encoding)
    const all = text.split('\n')
    if (all[all.length - 1] === '') all.pop()
    const { from, to } = bounds(req, all.length)
    const lines = all.slice(from - 1, to).map(l => l.endsWith('\r') ? l.slice(0, -1) : l)
    const invalidUtf8 = sniff.encoding === 'utf8' && text.includes('\uFFFD') && !Buffer.from(text).equals(buf)
    return { lines, first: from, totalLines: all.length, invalidUtf8 }
  }
  const totalLines = await countLines(handle, size, req.signal)
  const { from, to } = bounds(req, totalLines)
  const lines: string[] = []
  let line = 1
  let carry: Buffer[] = []
  let invalidUtf8 = false
  const take = (parts: Buffer[]): void => {
    const raw = Buffer.concat(parts)
    let text = raw.toString('utf8')
    if (text.endsWith('\r')) text = text.slice(0, -1)
    if (text.includes('\uFFFD') && !Buffer.from(text).equals(raw)) invalidUtf8 = true
    lines.push(text)
  }
  const buf = Buffer.alloc(CHUNK_BYTES)
  let position = 0
  while (position < size && line <= to) {
    if (req.signal?.aborted === true) break
    const { bytesRead } = await handle.read(buf, 0, CHUNK_BYTES, position)
    if (bytesRead === 0) break
    position += bytesRead
    let at = 0
    const chunk = buf.subarray(0, bytesRead)
    while (at < chunk.length && line <= to) {
      const nl = chunk.indexOf(10, at)
      if (nl === -1) {
        if (line >= from) carry.push(Buffer.from(chunk.subarray(at)))
        break
      }
      if (line >= from) take([...carry, chunk.subarray(at, nl)])
      carry = []
      line++
      at = nl + 1
    }
  }
  if (carry.length > 0 && line >= from && line <= to) take(carry)
  return { lines, first: from, totalLines, invalidUtf8 }
}

/** Counts lines by scanning for '\n' in 1 MB chunks (a last line without '\n' counts). */
export async function countLines (handle: FileHandle, size: number, signal?: AbortSignal): Promise<number> {
  const buf = Buffer.alloc(CHUNK_BYTES)
  let count = 0
  let position = 0
  let last = 10
  while (position < size) {
    if (signal?.aborted === true) break
    const { bytesRead } = await handle.read(buf, 0, CHUNK_BYTES, position)
    if (bytesRead === 0) break
    for (let at = buf.indexOf(10, 0); at !== -1 && at < bytesRead; at = buf.indexOf(10, at + 1)) count++
    last = buf[bytesRead - 1]
    position += bytesRead
  }
  return position > 0 && last !== 10 ? count + 1 : count
}
