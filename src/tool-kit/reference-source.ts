import type { CodeIndex, OutlineRow, PathScope, SymbolRow } from '../services/code-index/index.js'
import { nameToken, type ReferenceKind } from '../services/symbols/index.js'
import type { WorkspaceService } from '../services/workspace/index.js'
import { shownPath } from './code-index-common.js'

/** A file that uses the name, with how often by kind. */
export interface ReferencingFile {
  /** The source's own key for the file. */
  id: number
  /** Its real path (what attribution compares). */
  path: string
  /** Its path as this session shows it. */
  shown: string
  counts: Partial<Record<ReferenceKind, number>>
}

/** One use in a file; lines and columns 1-based. */
export interface Site {
  kind: ReferenceKind
  line: number
  column: number
}

/** A definition of the name, as this session shows it. */
export interface Definition extends SymbolRow {
  shown: string
}

/** Where find_references and the call graph read uses of names: the code index, or a parse of candidate files. */
export interface ReferenceSource {
  /** The definitions of exactly this name (case counts), in path and line order. */
  definitions(name: string): Definition[]
  /** The files using the name (at or below `scope`), each with its counts. */
  files(name: string, scope: PathScope): ReferencingFile[]
  /** The uses of the name in these files, each file's in source order. */
  sites(name: string, files: readonly number[]): Map<number, Site[]>
  /** Each file's include and import specifiers. */
  imports(files: readonly number[]): Map<number, string[]>
  /** Each file's outline (the enclosing definitions of its uses). */
  outlines(files: readonly number[]): Map<number, OutlineRow[]>
}

/** Most definitions of one name read. */
const MAX_DEFINITIONS = 1000

/** The definitions among `rows` spelled exactly `name` and seen by this session, as it shows them. */
export function definitionsNamed (rows: readonly SymbolRow[], name: string, workspace: WorkspaceService): Definition[] {
  const out: Definition[] = []
  for (const row of rows) {
    const shown = row.name === name ? shownPath(workspace, row.path) : undefined
    if (shown !== undefined) out.push({ ...row, shown })
  }
  return out
}

/** The code index as a reference source; files the session does not see are left out. */
export function indexSource (index: CodeIndex, workspace: WorkspaceService): ReferenceSource {
  const token = (name: string): string => nameToken(name) as string
  return {
    definitions: (name) => definitionsNamed(index.findSymbols(name.toLowerCase(), 'exact', undefined, undefined, MAX_DEFINITIONS), name, workspace),
    files (name, scope) {
      const byFile = new Map<number, ReferencingFile>()
      for (const row of index.references.counts(token(name), scope)) {
        let file = byFile.get(row.file)
        if (file === undefined) {
          const shown = shownPath(workspace, row.path)
          if (shown === undefined) continue
          file = { id: row.file, path: row.path, shown, counts: {} }
          byFile.set(row.file, file)
        }
        file.counts[row.kind] = row.count
      }
      return [...byFile.values()]
    },
    sites (name, files) {
      const out = new Map<number, Site[]>()
      for (const { file, ...site } of index.references.sites(token(name), files)) {
        const list = out.get(file)
        if (list === undefined) out.set(file, [site])
        else list.push(site)
      }
      return out
    },
    imports: (files) => index.references.imports(files),
    outlines: (files) => index.references.outlines(files)
  }
}
