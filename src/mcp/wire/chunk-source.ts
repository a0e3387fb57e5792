import type { Readable } from 'node:stream'

/** Bytes in chunks, each valid only during its callback: the reader may reuse its buffer. */
export interface ChunkSource {
  /** Starts reading: every chunk to `onChunk`, then `onEnd` (EOF, or the descriptor closed or failed). */
  start (onChunk: (chunk: Buffer) => void, onEnd: () => void): void
  /** Stops delivering chunks. */
  stop (): void
}

/** A Readable as a chunk source ('data' events; strings become bytes). */
export function readableSource (input: Readable): ChunkSource {
  let listener: ((chunk: Buffer | string) => void) | undefined
  return {
    start (onChunk, onEnd) {
      listener = (chunk) => onChunk(typeof chunk === 'string' ? Buffer.from(chunk) : chunk)
      input.on('data', listener)
      input.once('end', onEnd)
      input.once('close', onEnd)
    },
    stop () {
      if (listener !== undefined) input.off('data', listener)
    }
  }
}
