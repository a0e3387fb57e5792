/**
 * What the framer found in the input: a complete line; a line over the cap, as soon as that is known
 * (answered at once); and, when that line's newline arrives, how many bytes it had (`dropped`, logged).
 */
export type Frame = { kind: 'line', bytes: Buffer } | { kind: 'too-large' } | { kind: 'dropped', bytes: number }

const LF = 0x0a
const CR = 0x0d

/** True for a line of JSON whitespace only (spec stdio: such lines carry no message). */
function isBlank (bytes: Buffer): boolean {
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i]
    if (b !== 0x20 && b !== 0x09 && b !== CR) return false
  }
  return true
}

/**
 * Newline-delimited framing on raw bytes (spec basic/transports stdio). Nothing is decoded before
 * a whole line is known, so a multi-byte character split across chunks is intact. A line over
 * `maxLineBytes` (its `\r\n` or `\n` not counted) yields one `too-large` frame as soon as it is
 * known, and its bytes are dropped up to the next newline. The part of a line that spans chunks is
 * copied piece by piece (never regrown, so a line costs its own size), never more than the cap plus one
 * byte: no chunk is kept, so a caller may read into one buffer it reuses. Blank lines are skipped; an
 * unterminated last line is never a message.
 */
export class LineFramer {
  private pieces: Buffer[] = []
  private held = 0
  /** Bytes of the over-long line being dropped, or -1 when none is. */
  private dropping = -1

  constructor (private readonly maxLineBytes: number) {}

  /** Bytes held for the line in progress (for tests of the memory bound). */
  get buffered (): number {
    return this.held
  }

  /** Feeds one chunk; returns the frames it completes, in order. A line's bytes may point into `chunk`. */
  push (chunk: Buffer): Frame[] {
    const frames: Frame[] = []
    let start = 0
    while (start < chunk.length) {
      const nl = chunk.indexOf(LF, start)
      const end = nl === -1 ? chunk.length : nl
      if (this.dropping !== -1) {
        this.dropping += end - start
        if (nl !== -1) this.endDrop(frames)
      } else if (nl === -1) {
        this.hold(chunk.subarray(start), frames)
      } else {
        this.complete(chunk.subarray(start, end), frames)
      }
      start = end + 1
    }
    return frames
  }

  private hold (part: Buffer, frames: Frame[]): void {
    const total = this.held + part.length
    // One byte of slack: a trailing \r belongs to the terminator, not the line.
    if (total > this.maxLineBytes + 1) {
      this.startDrop(total, frames)
      return
    }
    this.pieces.push(Buffer.from(part))
    this.held = total
  }

  private complete (tail: Buffer, frames: Frame[]): void {
    const total = this.held + tail.length
    if (total > this.maxLineBytes + 1) {
      this.startDrop(total, frames)
      this.endDrop(frames)
      return
    }
    let line = this.held === 0 ? tail : Buffer.concat([...this.pieces, tail], total)
    this.release()
    if (line.length > 0 && line[line.length - 1] === CR) line = line.subarray(0, line.length - 1)
    if (line.length > this.maxLineBytes) {
      frames.push({ kind: 'too-large' }, { kind: 'dropped', bytes: total })
    } else if (!isBlank(line)) {
      frames.push({ kind: 'line', bytes: line })
    }
  }

  private startDrop (bytes: number, frames: Frame[]): void {
    this.release()
    this.dropping = bytes
    frames.push({ kind: 'too-large' })
  }

  private endDrop (frames: Frame[]): void {
    frames.push({ kind: 'dropped', bytes: this.dropping })
    this.dropping = -1
  }

  private release (): void {
    this.pieces = []
    this.held = 0
  }
}
