import { fstatSync } from 'node:fs'
import net from 'node:net'
import type { Readable } from 'node:stream'
import type { ChunkSource } from '../mcp/wire/chunk-source.js'

/**
 * Reads a pipe or socket descriptor (how clients start a stdio server) into one buffer it reuses, so
 * input costs no allocation per read: a client streaming a huge line leaves no trail of garbage buffers
 * for the collector to find late. Undefined when `fd` is neither (a terminal, a file): use process.stdin.
 */
export function pipeSource (fd: number, size = 64 * 1024): ChunkSource | undefined {
  let stats
  try {
    stats = fstatSync(fd)
  } catch {
    return undefined
  }
  if (!stats.isFIFO() && !stats.isSocket()) return undefined
  const buffer = Buffer.allocUnsafe(size)
  let socket: net.Socket | undefined
  let deliver: ((chunk: Buffer) => void) | undefined
  return {
    start (onChunk, onEnd) {
      deliver = onChunk
      // Node's constructor takes onread beside fd (lib/net.js); @types/node lists it only for connect().
      const options: net.SocketConstructorOpts & { onread: net.OnReadOpts } = {
        fd,
        readable: true,
        writable: false,
        onread: {
          buffer,
          callback: (n: number) => {
            deliver?.(buffer.subarray(0, n))
            return true
          }
        }
      }
      socket = new net.Socket(options)
      socket.once('end', onEnd)
      socket.once('close', onEnd)
      // A read error ends input as EOF does; 'close' follows it.
      socket.on('error', () => {})
    },
    stop () {
      deliver = undefined
    }
  }
}

/** What the stdio server reads: `fd` as a pipe (pipeSource), else the Readable `fallback` gives (process.stdin). */
export function inputOf (fd: number, fallback: () => Readable): ChunkSource | Readable {
  return pipeSource(fd) ?? fallback()
}
