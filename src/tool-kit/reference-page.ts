import { indexedText, type OutlineRow } from '../services/code-index/index.js'
import { MAX_COLUMN, type ReferenceKind } from '../services/symbols/index.js'
import type { WorkspaceService } from '../services/workspace/index.js'
import type { Via } from './reference-attribution.js'
import type { ReferenceSource, ReferencingFile, Site } from './reference-source.js'

/** A file of the answer: its uses of the name that count (of the kind asked), and how they were tied. */
export interface CountedFile extends ReferencingFile {
  count: number
  via?: Via
}

/** One reference on a page, ready to show. */
export interface PageReference extends Site {
  path: string
  /** The innermost definition the use lies in (its outline row), if any. */
  container?: OutlineRow
  via?: Via
  /** The line as the file holds it now; undefined when the file changed since it was indexed. */
  text?: string
}

/** Longest line shown; a longer one is cut around the use. */
const SHOWN_CHARS = 200

/** A line as a reference shows it: trimmed, and cut around the use (at `column`) when long. */
export function lineAround (line: string, column: number): string {
  const trimmed = line.trimStart()
  const at = column - 1 - (line.length - trimmed.length)
  const text = trimmed.trimEnd()
  if (text.length <= SHOWN_CHARS) return text
  const from = Math.max(0, Math.min(at - SHOWN_CHARS / 4, text.length - SHOWN_CHARS))
  return `${from > 0 ? '…' : ''}${text.slice(from, from + SHOWN_CHARS)}${from + SHOWN_CHARS < text.length ? '…' : ''}`
}

/** The innermost outline row whose lines hold `line` (outline order: outer before inner). */
export function containerOf (outline: readonly OutlineRow[], line: number): OutlineRow | undefined {
  let found: OutlineRow | undefined
  for (const row of outline) {
    if (row.line > line) break
    if (row.endLine >= line) found = row
  }
  return found
}

/** A container as a reference names it: `Owner.name` for a member. */
export const containerName = (row: OutlineRow): string => row.container === null ? row.name : `${row.container}.${row.name}`

/** A file a page touches, and how many of its uses come before the page. */
export interface PageFile {
  file: CountedFile
  skip: number
}

/** The files (sorted as shown) holding the references at positions offset..offset+pageSize. */
export function pageFiles (files: readonly CountedFile[], offset: number, pageSize: number): PageFile[] {
  const touched: PageFile[] = []
  let before = 0
  for (const file of files) {
    if (before + file.count > offset && before < offset + pageSize) touched.push({ file, skip: Math.max(0, offset - before) })
    before += file.count
  }
  return touched
}

/** The references of a page's files, with their containers and lines read now through the root jail. */
export async function referencePage (source: ReferenceSource, name: string, touched: readonly PageFile[], kind: ReferenceKind | undefined, pageSize: number, workspace: WorkspaceService, signal: AbortSignal): Promise<PageReference[]> {
  const ids = touched.map(t => t.file.id)
  const sites = source.sites(name, ids)
  const outlines = source.outlines(ids)
  // A page touches at most pageSize files: they are read at once (each read waits on the disk, not the CPU).
  const texts = await Promise.all(touched.map(async ({ file }) => await indexedText(workspace, file.path, signal)))
  const out: PageReference[] = []
  for (const [i, { file, skip }] of touched.entries()) {
    // The page touches files with uses counted: each has its sites.
    const uses = (sites.get(file.id) as Site[]).filter(site => kind === undefined || site.kind === kind).slice(skip, skip + pageSize - out.length)
    const lines = texts[i]?.split('\n')
    const outline = outlines.get(file.id) ?? []
    for (const use of uses) {
      const line = lines?.[use.line - 1]
      // A line that no longer holds the name where it was indexed changed since: it is not shown as if it did. A
      // use past MAX_COLUMN is kept at it: its line is shown around the name's first place from there.
      const at = line === undefined ? -1 : use.column >= MAX_COLUMN ? line.indexOf(name, MAX_COLUMN - 1) + 1 : line.startsWith(name, use.column - 1) ? use.column : -1
      const container = containerOf(outline, use.line)
      out.push({ ...use, path: file.shown, ...(container === undefined ? {} : { container }), ...(file.via === undefined ? {} : { via: file.via }), ...(at > 0 ? { text: lineAround(line as string, at) } : {}) })
    }
  }
  return out
}

const VIA_TEXT: Record<Via, string> = { 'same-file': 'defined here', import: 'includes or imports the definition', name: 'tied by name only' }

/** The page's references as Markdown: a heading per file, the enclosing definition named above its uses. */
export function renderReferences (page: readonly PageReference[], counts: ReadonlyMap<string, number>): string[] {
  const lines: string[] = []
  let file: string | undefined
  let container: OutlineRow | undefined | null = null
  for (const ref of page) {
    if (ref.path !== file) {
      file = ref.path
      container = null
      const n = counts.get(ref.path) as number
      lines.push(`## ${ref.path} — ${n} ${n === 1 ? 'reference' : 'references'}${ref.via === undefined ? '' : ` (${VIA_TEXT[ref.via]})`}`)
    }
    if (ref.container !== container) {
      container = ref.container
      lines.push(container === undefined ? 'top level:' : `in ${container.kind} ${containerName(container)} (${container.line}-${container.endLine}):`)
    }
    lines.push(`  ${ref.line}:${ref.column} ${ref.kind}${ref.text === undefined ? ' (the file changed since it was indexed; read_files reads it now)' : ` — ${ref.text}`}`)
  }
  return lines
}
