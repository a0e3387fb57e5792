import fs from 'node:fs'
import type { DatabaseSyncInstance } from '@photostructure/sqlite'
import { removeIndexFile } from './index-file.js'
import { NOT_INDEXED, SCHEMA, SCHEMA_VERSION, schemaOf, type FileEntry, type IndexedFile, type MetaKey, type Sqlite, type StoreCounts } from './index-schema.js'
import { REFERENCE_KINDS } from '../symbols/index.js'

/** The write side of an index file: the index thread's (or the `index` command's) only connection. */
export interface IndexWriter {
  /** Every indexed file with its size and mtime. */
  files(): IndexedFile[]
  /** The indexed files anywhere below `folder` (a real path, as the walk spells it). */
  filesUnder(folder: string): IndexedFile[]
  /**
   * Replaces what the index holds of these files (one transaction), giving the thread a turn between two files:
   * the build's lanes hand their parsers the next files while a batch is written.
   */
  write(entries: readonly FileEntry[]): Promise<void>
  /** Forgets files (one transaction). */
  remove(paths: readonly string[]): Promise<void>
  counts(): StoreCounts
  /** Records that a scan finished (the index is complete as of `at`, ms since the epoch). */
  finished(at: number): void
  /** Merges the references' full-text segments into one (after a scan that wrote many files: lookups probe one segment). */
  optimize(): void
  /** The inode of the file this writer has open (a file renamed into its place is another one). */
  readonly inode: number | undefined
  close(): void
}

/** How an index file is written. */
export interface IndexWriterOptions {
  /** Largest size the file may grow to, in bytes (a write past it fails as a full disk would). Default: none. */
  maxBytes?: number
  /**
   * `wal` (default): readers on other connections see each committed batch while the build goes on. `delete`: a
   * rollback journal, so the file is whole on its own after each commit — what a staging file to be published
   * needs (readers on read-only or network volumes have no log beside it). Its commits are not synced: nobody
   * reads a staging file but its build, one cut short is built again, and publishIndex syncs it once before the
   * rename (a sync per batch stalled the build: ~550 of them over Linux, the parsers idle through each).
   */
  journal?: 'wal' | 'delete'
}

const PAGE_SIZE = 4096
const inodeOf = (file: string): number | undefined => fs.statSync(file, { throwIfNoEntry: false })?.ino

/**
 * Opens (creating when needed) the index at `file` for writing. A file written by another schema version, or
 * that is no index, is removed and made anew: dropping the tables of a 3 GB index rewrote every page (40 s).
 * Only the file this call opened is removed — not one another server put there meanwhile. WAL lets readers on
 * other connections see each committed batch.
 */
export function openIndexWriter (sqlite: Sqlite, file: string, options: IndexWriterOptions = {}): IndexWriter {
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
  db.exec(options.journal === 'delete'
    ? `PRAGMA page_size = ${PAGE_SIZE}; PRAGMA journal_mode = DELETE; PRAGMA synchronous = OFF; PRAGMA busy_timeout = 5000`
    : `PRAGMA page_size = ${PAGE_SIZE}; PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA busy_timeout = 5000; PRAGMA journal_size_limit = 67108864`)
  // SQLite answers a write past max_page_count with SQLITE_FULL, exactly as it answers a full disk.
  if (options.maxBytes !== undefined) db.exec(`PRAGMA max_page_count = ${Math.max(64, Math.floor(options.maxBytes / PAGE_SIZE))}`)
  // Tables and version in one transaction: a server opening the file meanwhile sees all of it or none.
  transactionOn(db, () => db.exec(`${SCHEMA} INSERT OR REPLACE INTO meta (key, value) VALUES ('schema', '${SCHEMA_VERSION}')`))

  const q = {
    files: db.prepare('SELECT path, size, mtime AS mtimeMs FROM files'),
    // A range on the unique path index: '0' is the character after '/'.
    filesUnder: db.prepare('SELECT path, size, mtime AS mtimeMs FROM files WHERE path >= ? AND path < ?'),
    fileId: db.prepare('SELECT id, language FROM files WHERE path = ?'),
    chunkIds: db.prepare('SELECT id FROM chunks WHERE file = ?'),
    deleteFts: db.prepare('DELETE FROM chunks_fts WHERE rowid = ?'),
    deleteChunks: db.prepare('DELETE FROM chunks WHERE file = ?'),
    deleteSymbols: db.prepare('DELETE FROM symbols WHERE file = ?'),
    deleteFile: db.prepare('DELETE FROM files WHERE id = ?'),
    insertFile: db.prepare('INSERT INTO files (path, size, mtime, language) VALUES (?, ?, ?, ?)'),
    insertChunk: db.prepare('INSERT INTO chunks (file, start, end, symbol, kind, hash) VALUES (?, ?, ?, ?, ?, ?)'),
    insertFts: db.prepare('INSERT INTO chunks_fts (rowid, name, head, path, body) VALUES (?, ?, ?, ?, ?)'),
    insertSymbol: db.prepare('INSERT INTO symbols (file, name, name_lc, kind, container, line, end_line, signature) VALUES (?, ?, ?, ?, ?, ?, ?, ?)'),
    insertRefs: db.prepare(`INSERT INTO refs_fts (rowid, ${REFERENCE_KINDS.join(', ')}) VALUES (?${', ?'.repeat(REFERENCE_KINDS.length)})`),
    insertSites: db.prepare('INSERT INTO ref_sites (file, sites, calls, imports) VALUES (?, ?, ?, ?)'),
    deleteSites: db.prepare('DELETE FROM ref_sites WHERE file = ?'),
    deleteRefs: db.prepare('DELETE FROM refs_fts WHERE rowid = ?'),
    countRows: db.prepare('SELECT (SELECT count(*) FROM files WHERE language != ?) AS files, (SELECT count(*) FROM chunks) AS chunks, (SELECT count(*) FROM symbols) AS symbols'),
    getMeta: db.prepare('SELECT value FROM meta WHERE key = ?'),
    setMeta: db.prepare('INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)')
  }
  const setMeta = (key: MetaKey, value: string): void => { q.setMeta.run(key, value) }

  // The counts are kept in meta, changed by each write in its own transaction: counting 3 million symbols after
  // every batch of a build took longer than the batch. An index without them is counted once.
  const counted = (): StoreCounts => {
    const kept = q.getMeta.get('counts') as { value: string } | undefined
    if (kept !== undefined) return JSON.parse(kept.value) as StoreCounts
    const rows = { ...q.countRows.get(NOT_INDEXED) as unknown as StoreCounts }
    setMeta('counts', JSON.stringify(rows))
    return rows
  }
  let delta: StoreCounts = { files: 0, chunks: 0, symbols: 0 }

  function forget (path: string): void {
    const row = q.fileId.get(path) as { id: number, language: string } | undefined
    if (row === undefined) return
    for (const chunk of q.chunkIds.all(row.id) as Array<{ id: number }>) q.deleteFts.run(chunk.id)
    delta.chunks -= Number(q.deleteChunks.run(row.id).changes)
    delta.symbols -= Number(q.deleteSymbols.run(row.id).changes)
    // A contentless index takes a deletion of any rowid on trust: only a file that had references deletes any.
    if (Number(q.deleteSites.run(row.id).changes) > 0) q.deleteRefs.run(row.id)
    q.deleteFile.run(row.id)
    if (row.language !== NOT_INDEXED) delta.files--
  }

  /** Runs `work` in one transaction, the counts changed by what it did in the same one. */
  async function transaction (work: () => void | Promise<void>): Promise<void> {
    await transactionAwaiting(db, async () => {
      const before = counted()
      delta = { files: 0, chunks: 0, symbols: 0 }
      await work()
      setMeta('counts', JSON.stringify({ files: before.files + delta.files, chunks: before.chunks + delta.chunks, symbols: before.symbols + delta.symbols }))
    })
  }

  function put (entry: FileEntry): void {
    forget(entry.path)
    const file = Number(q.insertFile.run(entry.path, entry.size, entry.mtimeMs, entry.language).lastInsertRowid)
    if (entry.language !== NOT_INDEXED) delta.files++
    delta.chunks += entry.chunks.length
    delta.symbols += entry.symbols.length
    for (const c of entry.chunks) {
      const id = q.insertChunk.run(file, c.start, c.end, c.symbol, c.kind, c.hash).lastInsertRowid
      q.insertFts.run(id, c.fields.name, c.fields.head, c.fields.path, c.fields.body)
    }
    for (const s of entry.symbols) q.insertSymbol.run(file, s.name, s.name.toLowerCase(), s.kind, s.container ?? null, s.line, s.endLine, s.signature)
    const refs = entry.references
    if (refs !== undefined) {
      q.insertRefs.run(file, ...refs.names)
      q.insertSites.run(file, refs.sites, refs.names[0], refs.imports.join('\n'))
    }
  }

  return {
    files: () => q.files.all() as unknown as IndexedFile[],
    filesUnder: (folder) => q.filesUnder.all(`${folder}/`, `${folder}0`) as unknown as IndexedFile[],
    write: async (entries) => {
      await transaction(async () => {
        for (const entry of entries) {
          put(entry)
          await new Promise(resolve => setImmediate(resolve))
        }
      })
    },
    remove: async (paths) => {
      await transaction(() => { for (const path of paths) forget(path) })
    },
    counts: counted,
    finished (at) {
      transactionOn(db, () => {
        setMeta('complete', '1')
        setMeta('built', String(at))
      })
    },
    optimize () {
      db.exec("INSERT INTO refs_fts (refs_fts) VALUES ('optimize')")
    },
    inode: inodeOf(file),
    close: () => db.close()
  }
}

/**
 * Runs `work` in a transaction on `db`. When the commit itself fails (a full disk), SQLite has already rolled
 * back: a second ROLLBACK would fail with "no transaction is active" and hide the reason, so it is sent only
 * while a transaction is open.
 */
function transactionOn (db: DatabaseSyncInstance, work: () => void): void {
  db.exec('BEGIN')
  try {
    work()
    db.exec('COMMIT')
  } catch (err) {
    if (db.isTransaction) db.exec('ROLLBACK')
    throw err
  }
}

/** transactionOn for work that awaits (the connection is this thread's alone: nothing else writes meanwhile). */
async function transactionAwaiting (db: DatabaseSyncInstance, work: () => Promise<void>): Promise<void> {
  db.exec('BEGIN')
  try {
    await work()
    db.exec('COMMIT')
  } catch (err) {
    if (db.isTransaction) db.exec('ROLLBACK')
    throw err
  }
}
