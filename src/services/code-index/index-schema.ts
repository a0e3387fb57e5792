import { createRequire } from 'node:module'
import type { DatabaseSyncInstance } from '@photostructure/sqlite'
import type { Chunk } from './chunker.js'
import { REFERENCE_KINDS, type FileReferences, type OutlineSymbol } from '../symbols/index.js'

/** Bump when the tables or what goes into them change: an index of another version is rebuilt from scratch. */
export const SCHEMA_VERSION = '6'

/** The language of a file the index passed by (binary, too big): remembered so a rescan skips it, never counted. */
export const NOT_INDEXED = '-'

/** What the index holds of one file, by size and modification time (the cheap change test). */
export interface IndexedFile {
  path: string
  size: number
  mtimeMs: number
}

/** A chunk's text as the ranked search sees it, field by field (space-separated searchTokens). */
export interface ChunkFields {
  /** The names defined in the chunk. */
  name: string
  /** Their signatures and doc comments. */
  head: string
  /** The file's path. */
  path: string
  /** The chunk's lines. */
  body: string
}

/** How much a match in each field counts, in the order of the columns (bm25's weights): a name above its use. */
export const FIELD_WEIGHTS: Readonly<Record<keyof ChunkFields, number>> = { name: 8, head: 3, path: 2, body: 1 }

/** One file's contribution, ready to write. */
export interface FileEntry extends IndexedFile {
  language: string
  /** Each chunk with its search fields and the hash of its text (what its vector is keyed by). */
  chunks: Array<Chunk & { fields: ChunkFields, hash: string }>
  symbols: OutlineSymbol[]
  /** The uses of names the parse found (absent for a file the index passed by). */
  references?: FileReferences
}

/** A definition found by name. */
export interface SymbolRow {
  path: string
  name: string
  kind: string
  container: string | null
  line: number
  endLine: number
  signature: string
}

/** A chunk found by a ranked search; lower score is better (bm25 is negative). */
export interface ChunkRow {
  /** The chunk's row: stable until its file is indexed again. */
  id: number
  path: string
  start: number
  end: number
  symbol: string
  kind: string
  score: number
}

/** How many of each the index holds. */
export interface StoreCounts {
  files: number
  chunks: number
  symbols: number
}

/** Where to look: every file, or the files at or below an absolute path. */
export type PathScope = string | undefined

/** Name matching of findSymbols. */
export type NameMatch = 'exact' | 'prefix' | 'substring'

/** The SQLite binding's module. */
export type Sqlite = typeof import('@photostructure/sqlite')

/**
 * The SQLite binding (prebuilt N-API binaries in the package), or null when it is not installed or does not load
 * here; `failed` hears why (a binary built for another libc says so only in this error).
 */
export function loadSqlite (require: (id: string) => unknown = createRequire(import.meta.url), failed?: (err: unknown) => void): Sqlite | null {
  try {
    return require('@photostructure/sqlite') as Sqlite
  } catch (err) {
    failed?.(err)
    return null
  }
}

/** The tables, made in one transaction with the version (see openIndexWriter). */
export const SCHEMA = `
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files (id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE, size INTEGER NOT NULL, mtime REAL NOT NULL, language TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS chunks (id INTEGER PRIMARY KEY AUTOINCREMENT, file INTEGER NOT NULL, start INTEGER NOT NULL, end INTEGER NOT NULL, symbol TEXT NOT NULL, kind TEXT NOT NULL, hash TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS chunks_file ON chunks(file);
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5(name, head, path, body, content='', contentless_delete=1, tokenize="unicode61 tokenchars '_'");
CREATE TABLE IF NOT EXISTS symbols (id INTEGER PRIMARY KEY, file INTEGER NOT NULL, name TEXT NOT NULL, name_lc TEXT NOT NULL, kind TEXT NOT NULL, container TEXT, line INTEGER NOT NULL, end_line INTEGER NOT NULL, signature TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS symbols_name ON symbols(name_lc);
CREATE INDEX IF NOT EXISTS symbols_file ON symbols(file);
CREATE TABLE IF NOT EXISTS vectors (id INTEGER PRIMARY KEY, hash TEXT NOT NULL, model TEXT NOT NULL, dims INTEGER NOT NULL, vector BLOB NOT NULL, UNIQUE (hash, model, dims));
CREATE VIRTUAL TABLE IF NOT EXISTS refs_fts USING fts5(${REFERENCE_KINDS.join(', ')}, content='', contentless_delete=1, tokenize="unicode61 remove_diacritics 0 tokenchars '_$#'");
CREATE VIRTUAL TABLE IF NOT EXISTS refs_vocab USING fts5vocab(refs_fts, instance);
CREATE TABLE IF NOT EXISTS ref_sites (file INTEGER PRIMARY KEY, sites BLOB NOT NULL, calls TEXT NOT NULL, imports TEXT NOT NULL);
`

/** What schemaOf says of a file that is some other kind of file. */
export const NOT_AN_INDEX = 'not an index'

/** The schema an index file was written with: undefined while it has none yet, NOT_AN_INDEX for another kind of file. */
export function schemaOf (db: DatabaseSyncInstance): string | undefined {
  try {
    return (db.prepare("SELECT value FROM meta WHERE key = 'schema'").get() as { value: string } | undefined)?.value
  } catch (err) {
    return /no such table/.test(String(err)) ? undefined : NOT_AN_INDEX
  }
}

/** A value the writer keeps in `meta` (read with metaOf). */
export type MetaKey = 'counts' | 'complete' | 'built'

/** A meta value, or undefined. */
export function metaOf (db: DatabaseSyncInstance, key: MetaKey): string | undefined {
  return (db.prepare('SELECT value FROM meta WHERE key = ?').get(key) as { value: string } | undefined)?.value
}
