import type { DatabaseSyncInstance } from '@photostructure/sqlite'
import type { ReferenceKind } from '../symbols/index.js'
import type { PathScope, SymbolRow } from './index-schema.js'
import { scopeArgs, scopeSql } from './scope-sql.js'

/** An indexed source file: its row, real path and language. */
export interface MapFile {
  id: number
  path: string
  language: string
}

/** A definition of a file, as the outline gave it: a symbol row keyed by the file's id rather than its path. */
export type MapDefinition = Omit<SymbolRow, 'path'> & { file: number }

/** A file that uses one name (by index token) one way. */
export interface MapUse {
  token: string
  file: number
  kind: ReferenceKind
}

/** What the repository map reads of an index file. */
export interface MapQueries {
  /** Every source file at or below `scope` (files passed by — binary, too big — left out). */
  files(scope: PathScope): MapFile[]
  /** The definitions of these files whose kind is one of `kinds`, in file and outline order. */
  definitions(files: readonly number[], kinds: readonly string[]): MapDefinition[]
  /** For each of these index tokens, the files using it and how (each file and kind once). */
  uses(tokens: readonly string[]): MapUse[]
  /** How many definitions each of these names has in the whole index (names spelled exactly). */
  definers(names: readonly string[]): Map<string, number>
  /** The real paths of these file rows. */
  paths(files: readonly number[]): Map<number, string>
}

/** The map queries on an open index connection (prepared on first use). */
export function mapQueries (db: DatabaseSyncInstance, notIndexed: string): MapQueries {
  return {
    files: (scope) => db.prepare(`SELECT f.id, f.path, f.language FROM files f WHERE f.language != ?${scopeSql(scope)} ORDER BY f.path`).all(notIndexed, ...scopeArgs(scope)) as unknown as MapFile[],
    definitions: (files, kinds) => files.length === 0
      ? []
      : db.prepare('SELECT file, name, kind, container, line, end_line AS endLine, signature FROM symbols WHERE file IN (SELECT value FROM json_each(?)) AND kind IN (SELECT value FROM json_each(?)) ORDER BY file, id')
        .all(JSON.stringify(files), JSON.stringify(kinds)) as unknown as MapDefinition[],
    // One lookup of each term in the vocabulary's index (the join drives term = ?), each file and kind once.
    uses: (tokens) => tokens.length === 0
      ? []
      : db.prepare('SELECT DISTINCT n.value AS token, v.doc AS file, v.col AS kind FROM json_each(?) n JOIN refs_vocab v ON v.term = n.value')
        .all(JSON.stringify(tokens)) as unknown as MapUse[],
    definers: (names) => names.length === 0
      ? new Map()
      : new Map((db.prepare('SELECT s.name, count(*) AS n FROM json_each(?) k JOIN symbols s ON s.name_lc = k.value GROUP BY s.name')
        .all(JSON.stringify([...new Set(names.map(n => n.toLowerCase()))])) as Array<{ name: string, n: number }>).map(r => [r.name, r.n])),
    paths: (files) => files.length === 0
      ? new Map()
      : new Map((db.prepare('SELECT id, path FROM files WHERE id IN (SELECT value FROM json_each(?))').all(JSON.stringify(files)) as Array<{ id: number, path: string }>).map(r => [r.id, r.path]))
  }
}
