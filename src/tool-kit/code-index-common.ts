import { pruneLines, pruneMentions } from '../services/prune-mentions.js'
import { type CodeIndex, type IndexProblem, problemText, searchTokens, storeWords, termForms, indexedLines, type ChunkRow, type PathScope } from '../services/code-index/index.js'
import { toolError } from '../base/errors.js'
import { Type } from '@sinclair/typebox'
import type { WorkspaceService } from '../services/workspace/index.js'
import type { ToolContext } from '../tool-api/define-tool.js'
import { clockTime, counted, cutLine } from './format.js'
import { formatCall } from './paging.js'

/** How long a call waits for the first scan before it answers from what is indexed so far (a task waits for all of it). */
export const INDEX_WAIT_MS = 3000

/** How the code index tools run as MCP tasks: a call still waiting for the index after 2 s becomes one. */
export const INDEX_TASK = { support: 'optional', afterMs: 2000 } as const

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

/** What to do about an index problem (problemText says what it is): what the agent can use now, and what the operator changes. */
export function problemHint (problem: IndexProblem): string {
  const retry = problem.retryAt === undefined ? '' : `; the server tries again at ${clockTime(problem.retryAt)}`
  const fix = problem.kind === 'missing'
    ? 'the operator publishes one with `workspace-mcp index` (same roots and --state-dir); this server picks it up within seconds'
    : problem.kind === 'size-limit'
      ? `the operator can raise --index-max-mb (WORKSPACE_MCP_INDEX_MAX_MB) or point --state-dir (WORKSPACE_MCP_STATE_DIR) elsewhere${retry}`
      : `the operator can point --state-dir (WORKSPACE_MCP_STATE_DIR) at a writable volume with room${retry}`
  return `search_regex searches the files themselves; ${fix}`
}

/**
 * Waits briefly for the first scan (with progress notifications), then says what an answer covers when the
 * index is not complete: the lines to put first in the text, empty when it is ready. An index whose store
 * cannot be written or read is a tool error that says why and what to do.
 */
export async function indexNotes (index: CodeIndex, ctx: Pick<ToolContext, 'signal' | 'progress' | 'taskBudgetMs' | 'unserved'>): Promise<string[]> {
  // A call that may be a task waits for the whole index (a second short of its allowance, to answer in time).
  const waitMs = ctx.taskBudgetMs === undefined ? INDEX_WAIT_MS : Math.max(INDEX_WAIT_MS, ctx.taskBudgetMs - 1000)
  const ready = await index.ready(waitMs, ctx.signal, (done, total) => { ctx.progress(done, total, 'indexing the workspace').catch(() => undefined) })
  const status = index.status()
  if (status.state === 'unavailable' && status.problem !== undefined) throw toolError('INDEX_UNAVAILABLE', problemText(status.problem), problemHint(status.problem))
  if (ready) return []
  if (status.state === 'failed') {
    return pruneLines([`Note: the code index could not be built (${storeWords(status.error ?? 'unknown error')}); these results cover ${counted(status.files, 'file')} indexed before. search_regex searches the files themselves.`], ctx.unserved)
  }
  return pruneLines([`Note: the code index is still being built (${status.done} of ${counted(status.pending, 'changed file')} done, ${counted(status.files, 'file')} indexed); these results cover the files indexed so far — call again shortly for the rest, or use search_regex now.`], ctx.unserved)
}

/** What an answer shows in place of lines it could not read from an indexed file (naming read_files where it is served). */
export const changedSinceIndexed = (unserved: ReadonlySet<string>): string => `(${pruneMentions('the file changed since it was indexed; read_files reads it now', unserved)})`

/** Lines of a chunk shown in a ranked answer: the ones with the query's words first. */
const SNIPPET_LINES = 6

/**
 * The lines of a found chunk worth showing — those holding a query term, else its first non-blank ones — read
 * now through the root jail, numbered (`n<TAB>text`).
 */
export async function snippetOf (workspace: WorkspaceService, hit: { shown: string, start: number, end: number }, terms: ReadonlySet<string>, ctx: Pick<ToolContext, 'signal' | 'unserved'>): Promise<string[]> {
  const numbered = await indexedLines(workspace, hit.shown, hit.start, hit.end, hit.end - hit.start + 1, ctx.signal)
  if (numbered === undefined) return [changedSinceIndexed(ctx.unserved)]
  const forms = termForms([...terms])
  const telling = numbered.filter(l => searchTokens(l.text).some(t => forms.has(t)))
  const shown = (telling.length > 0 ? telling : numbered.filter(l => l.text.trim() !== '')).slice(0, SNIPPET_LINES)
  return shown.map(l => `${l.n}\t${cutLine(l.text, 300)}`)
}

/** Most query words searched; the rest of a long query is dropped. */
export const MAX_QUERY_TERMS = 16

/** The fields of a found chunk in a ranked search's structuredContent (each tool adds its own score). */
export const ChunkResultFields = {
  path: Type.String(),
  start_line: Type.Integer({ description: 'First line of the chunk' }),
  end_line: Type.Integer({ description: 'Last line' }),
  symbol: Type.Optional(Type.String({ description: 'Definition the chunk is or lies in' })),
  kind: Type.String({ description: 'Its kind, or "code"' })
}

/** A found chunk as ChunkResultFields spell it, under the path the session shows. */
export function chunkResult (hit: ChunkRow & { shown: string }): { path: string, start_line: number, end_line: number, symbol?: string, kind: string } {
  return { path: hit.shown, start_line: hit.start, end_line: hit.end, ...(hit.symbol !== '' ? { symbol: hit.symbol } : {}), kind: hit.kind }
}

/** A found chunk's heading in a ranked answer: `## path:first-last kind symbol` (top-level code is `code`). */
export function chunkHeading (hit: ChunkRow & { shown: string }): string {
  return `## ${hit.shown}:${hit.start}-${hit.end} ${hit.kind === 'code' ? 'code' : `${hit.kind} ${hit.symbol}`}`
}

/** The line giving the read_files call that reads a found chunk whole; none where read_files is not served. */
export function readWholeLine (hit: ChunkRow & { shown: string }, unserved: ReadonlySet<string>): string[] {
  return pruneLines([`Read one whole: ${formatCall('read_files', { files: [{ path: hit.shown, start_line: hit.start, end_line: hit.end }] })}`], unserved)
}
