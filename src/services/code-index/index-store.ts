import fs from 'node:fs'
import { createRequire } from 'node:module'
import type { DatabaseSyncInstance, StatementSyncInstance } from '@photostructure/sqlite'
import type { OutlineSymbol } from '../outline.js'
import type { Chunk } from './chunker.js'
import { matchExpression } from './code-tokens.js'
import { removeIndexFile } from './index-file.js'

/** Bump when the tables or what goes into them change: an index of another version is rebuilt from scratch. */
export const SCHEMA_VERSION = '4'

/** The language of a file the index passed by (binary, too big): remembered so a rescan skips it, never counted. */
export const NOT_INDEXED = '-'

/** What the index holds of one file, by size and modification time (the cheap change test). */
export interface IndexedFile {
  path: string
  size: number
  mtimeMs: number
}

/** One file's contribution, ready to write. */
export interface FileEntry extends IndexedFile {
  language: string
  /** Each chunk with its search tokens and the hash of its text (what its vector is keyed by). */
  chunks: Array<Chunk & { tokens: string, hash: string }>
  symbols: OutlineSymbol[]
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

/** The index tables in one SQLite file (or in memory): files, chunks with their FTS5 twin, symbols. */
export interface IndexStore {
  /** Every indexed file with its size and mtime. */
  files(): IndexedFile[]
  /** Replaces what the index holds of these files (one transaction). */
  write(entries: readonly FileEntry[]): void
  /** Forgets files (one transaction). */
  remove(paths: readonly string[]): void
  counts(): StoreCounts
  /** Definitions by lower-cased name; ranked by the caller. At most `limit` rows. */
  findSymbols(nameLower: string, match: NameMatch, kind: string | undefined, scope: PathScope, limit: number): SymbolRow[]
  /** At most `limit` chunks: those with every term first, then those with any, each set best bm25 first. */
  searchChunks(terms: readonly string[], scope: PathScope, limit: number): ChunkRow[]
  /** The chunks with these ids that still exist (score 0), in no particular order. */
  chunksById(ids: readonly number[]): ChunkRow[]
  close(): void
}

type Sqlite = typeof import('@photostructure/sqlite')

/** The SQLite binding (prebuilt N-API binaries in the package), or null when it is not installed or does not load here. */
export function loadSqlite (require: (id: string) => unknown = createRequire(import.meta.url)): Sqlite | null {
  try {
    return require('@photostructure/sqlite') as Sqlite
  } catch {
    return null
  }
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files (id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE, size INTEGER NOT NULL, mtime REAL NOT NULL, language TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS chunks (id INTEGER PRIMARY KEY AUTOINCREMENT, file INTEGER NOT NULL, start INTEGER NOT NULL, end INTEGER NOT NULL, symbol TEXT NOT NULL, kind TEXT NOT NULL, hash TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS chunks_file ON chunks(file);
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5(body, content='', contentless_delete=1, tokenize="unicode61 tokenchars '_'");
CREATE TABLE IF NOT EXISTS symbols (id INTEGER PRIMARY KEY, file INTEGER NOT NULL, name TEXT NOT NULL, name_lc TEXT NOT NULL, kind TEXT NOT NULL, container TEXT, line INTEGER NOT NULL, end_line INTEGER NOT NULL, signature TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS symbols_name ON symbols(name_lc);
CREATE INDEX IF NOT EXISTS symbols_file ON symbols(file);
CREATE TABLE IF NOT EXISTS vectors (id INTEGER PRIMARY KEY, hash TEXT NOT NULL, model TEXT NOT NULL, dims INTEGER NOT NULL, vector BLOB NOT NULL, UNIQUE (hash, model, dims));
`

/** Upper bound of a path range: every path that starts with `prefix` sorts below it (the last code unit + 1). */
const after = (prefix: string): string => prefix.slice(0, -1) + String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1)

/** Rows of one file or folder (`f` is the files table): the path itself, or any path below it. */
const SCOPE_SQL = ' AND (f.path = ? OR (f.path >= ? AND f.path < ?))'

/** A LIKE pattern for a literal substring (`\` escapes the wildcards). */
const likeLiteral = (text: string): string => `%${text.replace(/[\\%_]/g, c => `\\${c}`)}%`

/** The schema an index file was written with: undefined while it has none yet, NOT_AN_INDEX for another kind of file. */
function schemaOf (db: DatabaseSyncInstance): string | undefined {
  try {
    return (db.prepare("SELECT value FROM meta WHERE key = 'schema'").get() as { value: string } | undefined)?.value
  } catch (err) {
    return /no such table/.test(String(err)) ? undefined : NOT_AN_INDEX
  }
}
const NOT_AN_INDEX = 'not an index'

const inodeOf = (file: string): number | undefined => fs.statSync(file, { throwIfNoEntry: false })?.ino

/**
 * Opens (creating when needed) the index at `file` (':memory:' for none on disk). A file written by another
 * schema version, or that is no index, is removed and made anew: dropping the tables of a 3 GB index rewrote
 * every page (40 s, on the event loop). Only the file this call opened is removed — not one another server put
 * there meanwhile. WAL lets readers on other connections see each committed batch.
 */
export function openIndexStore (sqlite: Sqlite, file: string): IndexStore {
  // Undefined for a file not made yet (and for ':memory:'): nothing to remove.
  const inode = inodeOf(file)
  let db: DatabaseSyncInstance = new sqlite.DatabaseSync(file)
  const version = schemaOf(db)
  if (version !== undefined && version !== SCHEMA_VERSION && inode !== undefined && inodeOf(file) === inode) {
    db.close()
    removeIndexFile(file)
    db = new sqlite.DatabaseSync(file)
  }
  // A build grows the write-ahead log while readers hold it (140 MB seen): a checkpoint then cuts it back to 64 MB.
  db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA busy_timeout = 5000; PRAGMA journal_size_limit = 67108864')
  // Tables and version in one transaction: a server opening the file meanwhile sees all of it or none.
  db.exec(`BEGIN; ${SCHEMA} INSERT OR REPLACE INTO meta (key, value) VALUES ('schema', '${SCHEMA_VERSION}'); COMMIT`)

  const q = {
    files: db.prepare('SELECT path, size, mtime AS mtimeMs FROM files'),
    fileId: db.prepare('SELECT id, language FROM files WHERE path = ?'),
    chunkIds: db.prepare('SELECT id FROM chunks WHERE file = ?'),
    deleteFts: db.prepare('DELETE FROM chunks_fts WHERE rowid = ?'),
    deleteChunks: db.prepare('DELETE FROM chunks WHERE file = ?'),
    deleteSymbols: db.prepare('DELETE FROM symbols WHERE file = ?'),
    deleteFile: db.prepare('DELETE FROM files WHERE id = ?'),
    insertFile: db.prepare('INSERT INTO files (path, size, mtime, language) VALUES (?, ?, ?, ?)'),
    insertChunk: db.prepare('INSERT INTO chunks (file, start, end, symbol, kind, hash) VALUES (?, ?, ?, ?, ?, ?)'),
    insertFts: db.prepare('INSERT INTO chunks_fts (rowid, body) VALUES (?, ?)'),
    insertSymbol: db.prepare('INSERT INTO symbols (file, name, name_lc, kind, container, line, end_line, signature) VALUES (?, ?, ?, ?, ?, ?, ?, ?)'),
    countRows: db.prepare('SELECT (SELECT count(*) FROM files WHERE language != ?) AS files, (SELECT count(*) FROM chunks) AS chunks, (SELECT count(*) FROM symbols) AS symbols'),
    counts: db.prepare("SELECT value FROM meta WHERE key = 'counts'"),
    setCounts: db.prepare("INSERT OR REPLACE INTO meta (key, value) VALUES ('counts', ?)")
  }

  // The counts are kept in meta, changed by each write in its own transaction: counting 3 million symbols after
  // every batch of a build took longer than the batch. An index without them is counted once.
  const counted = (): StoreCounts => {
    const row = q.counts.get() as { value: string } | undefined
    if (row !== undefined) return JSON.parse(row.value) as StoreCounts
    const rows = { ...q.countRows.get(NOT_INDEXED) as unknown as StoreCounts }
    q.setCounts.run(JSON.stringify(rows))
    return rows
  }
  let delta: StoreCounts = { files: 0, chunks: 0, symbols: 0 }
  const symbolQueries = new Map<string, StatementSyncInstance>()

  function forget (path: string): void {
    const row = q.fileId.get(path) as { id: number, language: string } | undefined
    if (row === undefined) return
    for (const chunk of q.chunkIds.all(row.id) as Array<{ id: number }>) q.deleteFts.run(chunk.id)
    delta.chunks -= Number(q.deleteChunks.run(row.id).changes)
    delta.symbols -= Number(q.deleteSymbols.run(row.id).changes)
    q.deleteFile.run(row.id)
    if (row.language !== NOT_INDEXED) delta.files--
  }

  /** Runs `work` in one transaction, the counts changed by what it did in the same one. */
  function transaction (work: () => void): void {
    db.exec('BEGIN')
    try {
      const before = counted()
      delta = { files: 0, chunks: 0, symbols: 0 }
      work()
      q.setCounts.run(JSON.stringify({ files: before.files + delta.files, chunks: before.chunks + delta.chunks, symbols: before.symbols + delta.symbols }))
      db.exec('COMMIT')
    } catch (err) {
      db.exec('ROLLBACK')
      throw err
    }
  }

  const scopeSql = (scope: PathScope): string => scope === undefined ? '' : SCOPE_SQL
  const scopeArgs = (scope: PathScope): string[] => scope === undefined ? [] : [scope, `${scope}/`, after(`${scope}/`)]

  const ranking = new Map<boolean, StatementSyncInstance>()
  /**
   * The best chunks for a MATCH expression. Unscoped, the full-text index ranks and cuts alone, and only the
   * winners are joined to their chunk and file (joining every match first cost a third of the query); a path
   * scope needs the join to filter.
   */
  function rankedStatement (scoped: boolean): StatementSyncInstance {
    let statement = ranking.get(scoped)
    if (statement === undefined) {
      statement = db.prepare(scoped
        ? `SELECT c.id, f.path, c.start, c.end, c.symbol, c.kind, bm25(chunks_fts) AS score FROM chunks_fts JOIN chunks c ON c.id = chunks_fts.rowid JOIN files f ON f.id = c.file WHERE chunks_fts MATCH ?${SCOPE_SQL} ORDER BY score, c.id LIMIT ?`
        : 'SELECT c.id, f.path, c.start, c.end, c.symbol, c.kind, r.score FROM (SELECT rowid AS id, bm25(chunks_fts) AS score FROM chunks_fts WHERE chunks_fts MATCH ? ORDER BY score, rowid LIMIT ?) r ' +
          'JOIN chunks c ON c.id = r.id JOIN files f ON f.id = c.file ORDER BY r.score, c.id')
      ranking.set(scoped, statement)
    }
    return statement
  }

  return {
    files: () => q.files.all() as unknown as IndexedFile[],
    write (entries) {
      transaction(() => {
        for (const entry of entries) {
          forget(entry.path)
          const file = Number(q.insertFile.run(entry.path, entry.size, entry.mtimeMs, entry.language).lastInsertRowid)
          if (entry.language !== NOT_INDEXED) delta.files++
          delta.chunks += entry.chunks.length
          delta.symbols += entry.symbols.length
          for (const c of entry.chunks) {
            const id = q.insertChunk.run(file, c.start, c.end, c.symbol, c.kind, c.hash).lastInsertRowid
            q.insertFts.run(id, c.tokens)
          }
          for (const s of entry.symbols) q.insertSymbol.run(file, s.name, s.name.toLowerCase(), s.kind, s.container ?? null, s.line, s.endLine, s.signature)
        }
      })
    },
    remove (paths) {
      transaction(() => { for (const path of paths) forget(path) })
    },
    counts: counted,
    findSymbols (nameLower, match, kind, scope, limit) {
      const where = match === 'exact' ? 's.name_lc = ?' : match === 'prefix' ? 's.name_lc >= ? AND s.name_lc < ?' : "s.name_lc LIKE ? ESCAPE '\\'"
      const key = `${match}:${kind !== undefined}:${scope !== undefined}`
      let statement = symbolQueries.get(key)
      if (statement === undefined) {
        statement = db.prepare('SELECT f.path, s.name, s.kind, s.container, s.line, s.end_line AS endLine, s.signature FROM symbols s JOIN files f ON f.id = s.file ' +
          `WHERE ${where}${kind !== undefined ? ' AND s.kind = ?' : ''}${scopeSql(scope)} ORDER BY f.path, s.line LIMIT ?`)
        symbolQueries.set(key, statement)
      }
      const name = match === 'exact' ? [nameLower] : match === 'prefix' ? [nameLower, after(nameLower)] : [likeLiteral(nameLower)]
      return statement.all(...name, ...(kind !== undefined ? [kind] : []), ...scopeArgs(scope), limit) as unknown as SymbolRow[]
    },
    searchChunks (terms, scope, limit) {
      // Chunks holding every term first (a small set, so ranking it is cheap), then — only when those do not
      // fill the window asked for — chunks holding any term, each set by BM25.
      const ranked = (op: 'AND' | 'OR', n: number): ChunkRow[] =>
        rankedStatement(scope !== undefined).all(matchExpression(terms, op), ...scopeArgs(scope), n) as unknown as ChunkRow[]
      const all = ranked('AND', limit)
      if (all.length < limit && terms.length > 1) {
        const found = new Set(all.map(r => r.id))
        all.push(...ranked('OR', limit).filter(row => !found.has(row.id)).slice(0, limit - all.length))
      }
      return all
    },
    chunksById (ids) {
      if (ids.length === 0) return []
      // One statement per call, as many placeholders as ids (a page asks for at most a few hundred).
      return db.prepare(`SELECT c.id, f.path, c.start, c.end, c.symbol, c.kind, 0 AS score FROM chunks c JOIN files f ON f.id = c.file WHERE c.id IN (${ids.map(() => '?').join(', ')})`)
        .all(...ids) as unknown as ChunkRow[]
    },
    close: () => db.close()
  }
}
