import { isToolError } from '../errors.js'
import type { CodeIndex } from '../services/code-index/code-index.js'
import type { PathScope } from '../services/code-index/index-store.js'
import type { WorkspaceService } from '../services/workspace.js'
import type { ToolContext } from './define-tool.js'
import { counted } from './format.js'

/** How long a call waits for the first scan before it answers from what is indexed so far. */
export const INDEX_WAIT_MS = 3000

/**
 * How an indexed file is shown to this session: its display path (`name:` first with several roots), or
 * undefined when the session does not see it (its client's roots narrowed the workspace). Lexical only: the
 * index stores real paths inside the roots, so nothing is looked up on disk.
 */
export function shownPath (workspace: WorkspaceService, file: string): string | undefined {
  try {
    return workspace.lexical(file).relative
  } catch {
    return undefined
  }
}

/** The folder or file `path` narrows a query to, as the index spells paths (undefined: everywhere). */
export async function scopeOf (workspace: WorkspaceService, path: string | undefined, signal: AbortSignal): Promise<PathScope> {
  if (path === undefined) return undefined
  const resolved = await workspace.resolve(path, { field: 'path', signal })
  // The root (or the top of several roots) is everywhere; a root of several is its own folder.
  return resolved.relative === '.' ? undefined : String(resolved.fsPath)
}

/**
 * Waits briefly for the first scan (with progress notifications), then says what an answer covers when the
 * index is not complete: the lines to put first in the text, empty when it is ready.
 */
export async function indexNotes (index: CodeIndex, ctx: Pick<ToolContext, 'signal' | 'progress'>): Promise<string[]> {
  const ready = await index.ready(INDEX_WAIT_MS, ctx.signal, (done, total) => { ctx.progress(done, total, 'indexing the workspace').catch(() => undefined) })
  if (ready) return []
  const status = index.status()
  if (status.state === 'failed') {
    return [`Note: the code index could not be built (${status.error ?? 'unknown error'}); these results cover ${counted(status.files, 'file')} indexed before. search_regex searches the files themselves.`]
  }
  return [`Note: the code index is still being built (${status.done} of ${counted(status.pending, 'changed file')} done, ${counted(status.files, 'file')} indexed); these results cover the files indexed so far — call again shortly for the rest, or use search_regex now.`]
}

/** What an answer shows in place of lines it could not read from an indexed file. */
export const CHANGED_SINCE_INDEXED = '(the file changed since it was indexed; read_files reads it now)'

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
