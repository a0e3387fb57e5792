import { closeSync, constants as fsc, fstatSync, openSync, readlinkSync, readSync, realpathSync } from 'node:fs'
import path from 'node:path'
import { isOutside } from './workspace/index.js'

/** A file named by the operator's configuration (the tool docs overlay), read synchronously. */
export interface ConfigFile {
  /** mtime:size:ino of the file now, or undefined when it cannot be read. */
  version(): string | undefined
  /** Its text, or undefined when it cannot be read (or is not allowed: see createConfigFile). */
  read(): string | undefined
}

const MAX_BYTES = 4 * 1024 * 1024

/** `resolve(p)`, or undefined when it fails. */
function realOf (p: string, resolve: (p: string) => string): string | undefined {
  try {
    return resolve(p)
  } catch {
    return undefined
  }
}

/**
 * An operator-configured file. When it lies inside the served root it is a workspace file, and is read as
 * one: opened without following a last-component link, and served only if the open descriptor's real path
 * (/proc/self/fd) is inside the root — so a workspace cannot swap in a link to a file outside.
 */
export function createConfigFile (file: string, root?: string): ConfigFile {
  const jailed = root !== undefined && !isOutside(path.relative(root, file))

  function withFd<T> (use: (fd: number) => T): T | undefined {
    let fd: number
    try {
      fd = openSync(file, fsc.O_RDONLY | fsc.O_NONBLOCK | (jailed ? fsc.O_NOFOLLOW : 0))
    } catch {
      return undefined
    }
    try {
      if (jailed) {
        // Where /proc is missing (macOS) the path's own real path stands in for the descriptor's: a folder
        // link out of the root is still refused, though a writer racing the open could slip past it.
        const real = realOf(`/proc/self/fd/${fd}`, readlinkSync) ?? realOf(file, realpathSync)
        if (real === undefined || isOutside(path.relative(root, real))) return undefined
      }
      if (!fstatSync(fd).isFile()) return undefined
      return use(fd)
    } finally {
      closeSync(fd)
    }
  }

  return {
    version: () => withFd(fd => {
      const st = fstatSync(fd)
      return `${st.mtimeMs}:${st.size}:${st.ino}`
    }),
    read: () => withFd(fd => {
      const size = fstatSync(fd).size
      if (size > MAX_BYTES) return undefined
      const buf = Buffer.alloc(size)
      let got = 0
      while (got < size) {
        const n = readSync(fd, buf, got, size - got, got)
        if (n === 0) break
        got += n
      }
      return buf.subarray(0, got).toString('utf8')
    })
  }
}
