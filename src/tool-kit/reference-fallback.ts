import { indexedText, type OutlineRow } from '../services/code-index/index.js'
import type { SearchService } from '../services/search/index.js'
import { buildOutline, referenceSites, symbolLanguageOf, type SymbolLanguage, type SymbolParser } from '../services/symbols/index.js'
import type { WorkspaceService } from '../services/workspace/index.js'
import type { Definition, ReferenceSource, ReferencingFile, Site } from './reference-source.js'

/** Most candidate files parsed per call when there is no index; more make the answer partial. */
export const MAX_PARSED_FILES = 300

/** What a parse of the candidate files found, and what it left out. */
export interface FallbackSource extends ReferenceSource {
  /** Files holding the name that were not parsed (past MAX_PARSED_FILES): totals are then lower bounds. */
  unparsed: number
  /** Files parsed. */
  parsed: number
}

interface Parsed {
  id: number
  path: string
  shown: string
  inScope: boolean
  sites: Site[]
  imports: string[]
  outline: OutlineRow[]
  definitions: Definition[]
}

/** A regular expression matching the name as a whole identifier (the name holds only letters, digits, _ and $). */
const wordPattern = (name: string): string => `(^|[^\\p{L}\\p{N}_$])${name.replace(/\$/g, '\\$')}($|[^\\p{L}\\p{N}_$])`

/**
 * The uses of a name without the code index: ripgrep finds the files holding it as a word (the whole workspace,
 * so definitions outside the scope — a folder or file as the session shows it — are seen too), then each is
 * parsed as the index would parse it, those in scope first, at most MAX_PARSED_FILES in all.
 */
export async function fallbackSource (name: string, scope: string | undefined, services: { workspace: WorkspaceService, search: SearchService, symbols: SymbolParser }, signal: AbortSignal): Promise<FallbackSource> {
  const { workspace, search, symbols } = services
  const page = await search.search({ pattern: wordPattern(name), mode: 'files' }, { offset: 0, pageSize: search.limits.maxFiles, signal })
  const candidates: Array<{ shown: string, language: SymbolLanguage, inScope: boolean }> = []
  for (const item of page.files) {
    const language = symbolLanguageOf(item.path)
    if (language !== undefined) candidates.push({ shown: item.path, language, inScope: scope === undefined || item.path === scope || item.path.startsWith(`${scope}/`) })
  }
  // Stable: in scope first, each group in path order.
  candidates.sort((a, b) => Number(b.inScope) - Number(a.inScope))
  const files: Parsed[] = []
  for (const candidate of candidates.slice(0, MAX_PARSED_FILES)) {
    const path = String((await workspace.resolve(candidate.shown, { signal })).fsPath)
    const text = await indexedText(workspace, path, signal)
    if (text === undefined) continue
    const parsed = await symbols.definitions(text, candidate.language, signal, { references: true })
    const outline = buildOutline(parsed.definitions, text.split('\n'))
    const refs = parsed.references as NonNullable<typeof parsed.references>
    files.push({
      id: files.length,
      path,
      shown: candidate.shown,
      inScope: candidate.inScope,
      sites: referenceSites(refs).filter(site => site.name === name).map(({ kind, line, column }) => ({ kind, line, column })).sort((a, b) => a.line - b.line || a.column - b.column),
      imports: refs.imports,
      outline: outline.map(s => ({ name: s.name, kind: s.kind, container: s.container ?? null, line: s.line, endLine: s.endLine })),
      definitions: outline.filter(s => s.name === name).map(s => ({ path, shown: candidate.shown, name: s.name, kind: s.kind, container: s.container ?? null, line: s.line, endLine: s.endLine, signature: s.signature }))
    })
  }
  const byId = (ids: readonly number[]): Parsed[] => ids.map(id => files[id])
  return {
    unparsed: Math.max(0, candidates.length - MAX_PARSED_FILES) + (page.totalIsLowerBound ? 1 : 0),
    parsed: files.length,
    definitions: () => files.flatMap(f => f.definitions),
    files: () => files.filter(f => f.inScope && f.sites.length > 0).map((f): ReferencingFile => {
      const counts: ReferencingFile['counts'] = {}
      for (const site of f.sites) counts[site.kind] = (counts[site.kind] ?? 0) + 1
      return { id: f.id, path: f.path, shown: f.shown, counts }
    }),
    sites: (_, ids) => new Map(byId(ids).map(f => [f.id, f.sites])),
    imports: (ids) => new Map(byId(ids).map(f => [f.id, f.imports])),
    outlines: (ids) => new Map(byId(ids).map(f => [f.id, f.outline]))
  }
}
