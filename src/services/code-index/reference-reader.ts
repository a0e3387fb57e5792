import type { DatabaseSyncInstance, StatementSyncInstance } from '@photostructure/sqlite'
import { kindStart, nameOfToken, REFERENCE_KINDS, siteWords, unpackSite, type ReferenceKind } from '../symbols/index.js'
import type { PathScope } from './index-schema.js'
import { scopeArgs, scopeSql } from './scope-sql.js'

/** How often a name is used one way in one indexed file. */
export interface ReferenceCount {
  /** The file's row in the index. */
  file: number
  /** Its real path. */
  path: string
  kind: ReferenceKind
  count: number
}

/** One stored use of a name; lines and columns 1-based (a column past MAX_COLUMN is kept at it). */
export interface StoredSite {
  file: number
  kind: ReferenceKind
  line: number
  column: number
}

/** One definition of a file's outline, as the index holds it. */
export interface OutlineRow {
  name: string
  kind: string
  container: string | null
  line: number
  endLine: number
}

/** The reference queries of an index file (see index-writer: refs_fts, its vocabulary, ref_sites). */
export interface ReferenceQueries {
  /** Per file and kind, how many times the name with this index token is used (files at or below `scope`). */
  counts(token: string, scope: PathScope): ReferenceCount[]
  /** Where the name with this token is used in these files, by file, in source order. */
  sites(token: string, files: readonly number[]): StoredSite[]
  /** The calls made on lines from..to of a file, in source order. */
  calls(file: number, from: number, to: number): Array<{ name: string, line: number, column: number }>
  /** Each file's include and import specifiers. */
  imports(files: readonly number[]): Map<number, string[]>
  /** Each file's outline, in outline order. */
  outlines(files: readonly number[]): Map<number, OutlineRow[]>
  /** The rows of these real paths (those indexed). */
  fileIds(paths: readonly string[]): Map<string, number>
}

const KIND_OF = new Map<string, number>(REFERENCE_KINDS.map((kind, i) => [kind, i]))

/** The reference queries on an open index connection. */
export function referenceQueries (db: DatabaseSyncInstance): ReferenceQueries {
  const counting = new Map<boolean, StatementSyncInstance>()
  let statements: Record<'sites' | 'blobs' | 'calls' | 'imports' | 'outlines' | 'ids', StatementSyncInstance> | undefined
  // Prepared on first use: a reader that never answers a reference question never compiles them.
  const q = (): NonNullable<typeof statements> => {
    statements ??= {
      sites: db.prepare('SELECT doc AS file, col AS kind, offset FROM refs_vocab WHERE term = ? AND doc IN (SELECT value FROM json_each(?)) ORDER BY doc'),
      blobs: db.prepare('SELECT file, sites FROM ref_sites WHERE file IN (SELECT value FROM json_each(?))'),
      calls: db.prepare('SELECT sites, calls FROM ref_sites WHERE file = ?'),
      imports: db.prepare('SELECT file, imports FROM ref_sites WHERE file IN (SELECT value FROM json_each(?))'),
      outlines: db.prepare('SELECT file, name, kind, container, line, end_line AS endLine FROM symbols WHERE file IN (SELECT value FROM json_each(?)) ORDER BY file, id'),
      ids: db.prepare('SELECT id, path FROM files WHERE path IN (SELECT value FROM json_each(?))')
    }
    return statements
  }
  return {
    counts (token, scope) {
      let statement = counting.get(scope !== undefined)
      if (statement === undefined) {
        // The vocabulary's instances of one term come from its index entry (term = ?), each joined to its file.
        statement = db.prepare('SELECT v.doc AS file, f.path, v.col AS kind, count(*) AS count FROM refs_vocab v JOIN files f ON f.id = v.doc ' +
          `WHERE v.term = ?${scopeSql(scope)} GROUP BY v.doc, v.col`)
        counting.set(scope !== undefined, statement)
      }
      return statement.all(token, ...scopeArgs(scope)) as unknown as ReferenceCount[]
    },
    sites (token, files) {
      if (files.length === 0) return []
      // One snapshot for both reads: a file's instances and its sites are written in one transaction.
      db.exec('BEGIN')
      let blobs: Array<{ file: number, sites: Uint8Array }>
      let instances: Array<{ file: number, kind: ReferenceKind, offset: number }>
      try {
        blobs = q().blobs.all(JSON.stringify(files)) as typeof blobs
        instances = q().sites.all(token, JSON.stringify(files)) as typeof instances
      } finally {
        db.exec('COMMIT')
      }
      const words = new Map(blobs.map(row => [row.file, siteWords(row.sites)]))
      const out: StoredSite[] = instances.map(({ file, kind, offset }) => {
        const stored = words.get(file) as Uint32Array
        return { file, kind, ...unpackSite(stored[kindStart(stored, KIND_OF.get(kind) as number) + offset]) }
      })
      return out.sort((a, b) => a.file - b.file || a.line - b.line || a.column - b.column)
    },
    calls (file, from, to) {
      const row = q().calls.get(file) as { sites: Uint8Array, calls: string } | undefined
      if (row === undefined || row.calls === '') return []
      const words = siteWords(row.sites)
      const start = kindStart(words, 0)
      return row.calls.split(' ').map((token, i) => ({ name: nameOfToken(token), ...unpackSite(words[start + i]) })).filter(c => c.line >= from && c.line <= to)
    },
    imports (files) {
      if (files.length === 0) return new Map()
      return new Map((q().imports.all(JSON.stringify(files)) as Array<{ file: number, imports: string }>).map(row => [row.file, row.imports === '' ? [] : row.imports.split('\n')]))
    },
    outlines (files) {
      const out = new Map<number, OutlineRow[]>()
      if (files.length === 0) return out
      for (const { file, ...row } of q().outlines.all(JSON.stringify(files)) as Array<OutlineRow & { file: number }>) {
        const list = out.get(file)
        if (list === undefined) out.set(file, [row])
        else list.push(row)
      }
      return out
    },
    fileIds (paths) {
      if (paths.length === 0) return new Map()
      return new Map((q().ids.all(JSON.stringify(paths)) as Array<{ id: number, path: string }>).map(row => [row.path, row.id]))
    }
  }
}
