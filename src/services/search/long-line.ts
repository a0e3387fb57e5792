import { displayPath, MAX_LINE_CHARS, type RgEvent } from './parse.js'

/** A `rg --json` record too long to hold, fed piece by piece; `end` gives what could be kept of it. */
export interface LongRecordScanner {
  push(piece: Buffer): void
  /** The event (its line cut to MAX_LINE_CHARS), or undefined when the record was not a match/context line. */
  end(): RgEvent | undefined
}

/** Bytes of a record searched for the start of its `lines` field (type and path come first; a path is < 64 KiB even escaped). */
const HEAD_BYTES = 64 * 1024
/** Raw JSON bytes of the line kept for display: one character takes at most 6 (`\uXXXX`). */
const KEEP_BYTES = MAX_LINE_CHARS * 6 + 16
/** Bytes after the line's closing quote kept to read `line_number` (ripgrep writes it right after `lines`). */
const AFTER_BYTES = 256
const MARK = Buffer.from(',"lines":{"')
const TEXT_KEY = Buffer.from('text":"')
const BYTES_KEY = Buffer.from('bytes":"')

type Phase = 'head' | 'string' | 'after' | 'lost'

/**
 * Streams over one over-long match/context record keeping a few KiB: the head (type and path), the first
 * characters of the line, its length in UTF-16 units (counted while scanning the JSON string) and the
 * line number that follows it. ripgrep writes `lines` before `line_number`, so neither the head nor the
 * tail alone is enough; the submatches that come last (possibly millions) are never kept.
 */
export function createLongRecordScanner (): LongRecordScanner {
  let phase: Phase = 'head'
  let head: Buffer = Buffer.alloc(0)
  let prefix: Buffer = Buffer.alloc(0)
  let base64 = false
  const kept: Buffer[] = []
  let keptBytes = 0
  let units = 0
  let rawBytes = 0
  let escape = false
  let hex = 0
  let after: Buffer = Buffer.alloc(0)
  /** The last raw bytes of the string, to leave its line terminator out of the length (as for a short line). */
  let tail: Buffer = Buffer.alloc(0)

  function scanString (chunk: Buffer): void {
    let i = 0
    for (; i < chunk.length; i++) {
      const b = chunk[i]
      if (hex > 0) {
        hex--
      } else if (escape) {
        escape = false
        if (b === 0x75) hex = 4
        units++
      } else if (b === 0x5c) {
        escape = true
      } else if (b === 0x22) {
        break
      } else if ((b & 0xc0) !== 0x80) {
        units += b >= 0xf0 ? 2 : 1
      }
    }
    rawBytes += i
    tail = Buffer.concat([tail, chunk.subarray(Math.max(0, i - 4), i)]).subarray(-4)
    if (keptBytes < KEEP_BYTES) {
      const piece = chunk.subarray(0, Math.min(i, KEEP_BYTES - keptBytes))
      kept.push(Buffer.from(piece))
      keptBytes += piece.length
    }
    if (i < chunk.length) {
      phase = 'after'
      pushAfter(chunk.subarray(i))
    }
  }

  function pushAfter (chunk: Buffer): void {
    if (after.length < AFTER_BYTES) after = Buffer.concat([after, chunk.subarray(0, AFTER_BYTES - after.length)])
  }

  function pushHead (chunk: Buffer): void {
    head = Buffer.concat([head, chunk])
    const at = head.indexOf(MARK)
    if (at === -1) {
      if (head.length >= HEAD_BYTES) phase = 'lost'
      return
    }
    const keyAt = at + MARK.length
    if (head.length < keyAt + BYTES_KEY.length) return
    const isText = head.subarray(keyAt, keyAt + TEXT_KEY.length).equals(TEXT_KEY)
    base64 = !isText && head.subarray(keyAt, keyAt + BYTES_KEY.length).equals(BYTES_KEY)
    if (!isText && !base64) {
      phase = 'lost'
      return
    }
    prefix = head.subarray(0, at)
    const stringAt = keyAt + (isText ? TEXT_KEY.length : BYTES_KEY.length)
    const inHead = head.subarray(stringAt)
    head = Buffer.alloc(0)
    phase = 'string'
    scanString(inHead)
  }

  return {
    push (piece) {
      switch (phase) {
        case 'head': {
          // Only as much of the piece as the head may still take; the rest goes on to the string scan.
          const room = HEAD_BYTES + 16 - head.length
          pushHead(piece.subarray(0, room))
          // pushHead may have moved on (TypeScript cannot see that through the call).
          const now = phase as Phase
          if (piece.length > room && now === 'string') scanString(piece.subarray(room))
          else if (piece.length > room && now === 'after') pushAfter(piece.subarray(room))
          return
        }
        case 'string': scanString(piece); return
        case 'after': pushAfter(piece)
      }
    },
    end () {
      if (phase !== 'after') return undefined
      const isMatch = prefix.subarray(0, 15).toString('latin1') === '{"type":"match"'
      const isContext = prefix.subarray(0, 17).toString('latin1') === '{"type":"context"'
      if (!isMatch && !isContext) return undefined
      let path: { text?: string, bytes?: string }
      try {
        path = (JSON.parse(prefix.toString('utf8') + '}}') as { data: { path: { text?: string, bytes?: string } } }).data.path
      } catch {
        return undefined
      }
      const line = /"line_number":(\d+)/.exec(after.toString('latin1'))
      const raw = Buffer.concat(kept)
      const decoded = base64 ? decodeBase64Prefix(raw) : decodeJsonPrefix(raw)
      // A line kept whole still holds its terminator, which a line of output never shows.
      const text = keptBytes === rawBytes ? decoded.replace(/\r?\n$/, '') : decoded
      const ending = tail.toString('latin1')
      const terminator = ending.endsWith('\\r\\n') ? 2 : ending.endsWith('\\n') ? 1 : 0
      const length = base64 ? Math.floor(rawBytes * 3 / 4) : units - terminator
      return {
        type: 'line',
        path: displayPath(path),
        line: { line: line === null ? 0 : Number(line[1]), text: text.slice(0, MAX_LINE_CHARS), start: 0, length, match: isMatch }
      }
    }
  }
}

/** Decodes the start of a JSON string body cut anywhere: a cut escape or UTF-8 sequence at the end is dropped. */
function decodeJsonPrefix (raw: Buffer): string {
  for (let cut = 0; cut <= 6 && cut < raw.length; cut++) {
    try {
      return stripBroken(JSON.parse(`"${raw.subarray(0, raw.length - cut).toString('utf8')}"`) as string)
    } catch {}
  }
  return ''
}

function decodeBase64Prefix (raw: Buffer): string {
  const usable = raw.subarray(0, raw.length - (raw.length % 4)).toString('latin1')
  return stripBroken(Buffer.from(usable, 'base64').toString('utf8'))
}

const stripBroken = (text: string): string => text.replace(/\uFFFD+$/, '')
