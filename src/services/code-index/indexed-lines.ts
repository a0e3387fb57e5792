import { isToolError } from '../../base/errors.js'
import type { FileHandle } from 'node:fs/promises'
import { MAX_SOURCE_BYTES } from '../symbols/index.js'
import type { WorkspaceService } from '../workspace/index.js'

const UTF8 = new TextDecoder()

/**
 * A source file's whole text as the index reads it: UTF-8 (most code) decoded whole, natively; other encodings
 * through the line reader that decodes them. Undefined for a binary file.
 */
export async function readSourceText (workspace: WorkspaceService, handle: FileHandle, size: number, signal: AbortSignal): Promise<string | undefined> {
  const sniff = await workspace.sniff(handle)
  if (sniff.binary) return undefined
  if (sniff.encoding !== 'utf8' || sniff.charset !== undefined) return (await workspace.readLines(handle, size, sniff, { start: 1, maxLines: Number.MAX_SAFE_INTEGER, signal })).lines.join('\n')
  // Read with read(), which every handle has (the index thread's jail hands out synchronous ones).
  const bytes = Buffer.allocUnsafe(size)
  let filled = 0
  for (let n = -1; n !== 0 && filled < size; filled += n) n = (await handle.read(bytes, filled, size - filled, filled)).bytesRead
  return UTF8.decode(bytes.subarray(0, filled))
}

/**
 * The whole text of an indexed file (its real path), read now through the root jail exactly as the index read
 * it; undefined when it went away, became binary or too big, or left what the workspace serves.
 */
export async function indexedText (workspace: WorkspaceService, path: string, signal: AbortSignal): Promise<string | undefined> {
  try {
    const handle = await workspace.openFile(await workspace.resolve(workspace.lexical(path).relative, { signal }))
    try {
      const { size } = await handle.stat()
      return size > MAX_SOURCE_BYTES ? undefined : await readSourceText(workspace, handle, size, signal)
    } finally {
      await handle.close()
    }
  } catch (err) {
    // The next scan catches up with the change; anything but a tool error is a bug for the caller to log.
    /* c8 ignore next */
    if (!isToolError(err)) throw err
    return undefined
  }
}

/**
 * Lines start..end (at most `maxLines`) of an indexed file as the session shows it, read now through the root
 * jail, each with its 1-based number; undefined when the file changed or went away since it was indexed.
 */
export async function indexedLines (workspace: WorkspaceService, shown: string, start: number, end: number, maxLines: number, signal: AbortSignal): Promise<Array<{ n: number, text: string }> | undefined> {
  try {
    const handle = await workspace.openFile(await workspace.resolve(shown, { signal }))
    try {
      const { size } = await handle.stat()
      const window = await workspace.readLines(handle, size, await workspace.sniff(handle), { start, end, maxLines, signal })
      return window.lines.map((text, i) => ({ n: window.first + i, text }))
    } finally {
      await handle.close()
    }
  } catch (err) {
    // The next scan catches up with the change; anything but a tool error is a bug for dispatch to log.
    /* c8 ignore next */
    if (!isToolError(err)) throw err
    return undefined
  }
}
