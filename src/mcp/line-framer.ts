/** What the framer found in the input: a complete line, or a line over the cap (rejected whole). */
export type Frame = { kind: 'line', bytes: Buffer } | { kind: 'too-large' }

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
 * known, and its bytes are dropped up to the next newline: never more than the cap plus one chunk
 * is held. Blank lines are skipped; an unterminated last line is never a message.
 */
export class LineFramer {
  private pieces: Buffer[] = []
  private held = 0
  private discarding = false

  constructor (private readonly maxLineBytes: number) {}

  /** Bytes held for the line in progress (for tests of the memory bound). */
  get buffered (): number {
    return this.held
  }

  /** Feeds one chunk; returns the frames it completes, in order. */
  push (chunk: Buffer): Frame[] {
    const frames: Frame[] = []
    let start = 0
    while (start < chunk.length) {
      const nl = chunk.indexOf(LF, start)
      const end = nl === -1 ? chunk.length : nl
      if (this.discarding) {
        if (nl !== -1) this.discarding = false
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
    // One byte of slack: a trailing \r belongs to the terminator, not the line.
    if (this.held + part.length > this.maxLineBytes + 1) {
      this.reset()
      this.discarding = true
      frames.push({ kind: 'too-large' })
      return
    }
    this.pieces.push(part)
    this.held += part.length
  }

  private complete (tail: Buffer, frames: Frame[]): void {
    const total = this.held + tail.length
    if (total > this.maxLineBytes + 1) {
      this.reset()
      frames.push({ kind: 'too-large' })
      return
    }
    let line = this.pieces.length === 0 ? tail : Buffer.concat([...this.pieces, tail], total)
    this.reset()
    if (line.length > 0 && line[line.length - 1] === CR) line = line.subarray(0, line.length - 1)
    if (line.length > this.maxLineBytes) frames.push({ kind: 'too-large' })
    else if (!isBlank(line)) frames.push({ kind: 'line', bytes: line })
  }

  private reset (): void {
    this.pieces = []
    this.held = 0
  }
}
