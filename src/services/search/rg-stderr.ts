import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { randomUUID } from 'node:crypto'
import { StringDecoder } from 'node:string_decoder'

const READ_BYTES = 64 * 1024

/**
 * A file of its own for a ripgrep run's stderr, already unlinked (its descriptor is all that names it), or undefined
 * when the temporary folder cannot take one (the run then reads stderr from a pipe). With `--debug`, ripgrep writes
 * each log line in a dozen unbuffered pieces: through a pipe every piece woke the server (~15,000 reads for one
 * search of Linux, ~100 ms of its CPU and as much of the answer's wait); a file takes them without waking anyone.
 */
export function openStderrFile (): number | undefined {
  const name = path.join(os.tmpdir(), `workspace-mcp-rg-${randomUUID()}.err`)
  let fd: number
  try {
    // Exclusive create, owner only: a name another user placed there (a link, say) is never opened.
    fd = fs.openSync(name, fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_RDWR, 0o600)
  } catch {
    return undefined
  }
  fs.rmSync(name, { force: true })
  return fd
}

/** Reads the stderr file from its start, text piece by piece to `onText`, then closes it; a failed read ends it. */
export async function readStderrFile (fd: number, onText: (text: string) => void): Promise<void> {
  const decoder = new StringDecoder('utf8')
  const buffer = Buffer.allocUnsafe(READ_BYTES)
  let position = 0
  try {
    for (;;) {
      const bytesRead = await new Promise<number>((resolve, reject) => fs.read(fd, buffer, 0, READ_BYTES, position, (err, n) => err === null ? resolve(n) : reject(err)))
      if (bytesRead === 0) break
      position += bytesRead
      onText(decoder.write(buffer.subarray(0, bytesRead)))
    }
    onText(decoder.end())
  } catch {
    // What was read is used; the rest of a file that cannot be read is lost, as a pipe's would be on a broken run.
  } finally {
    fs.closeSync(fd)
  }
}
