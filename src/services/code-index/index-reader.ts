import fs from 'node:fs'
import v8 from 'node:v8'
import vm from 'node:vm'
import { pathToFileURL } from 'node:url'
import type { DatabaseSyncInstance, StatementSyncInstance } from '@photostructure/sqlite'
import { ALL_WORDS_ENOUGH, CANDIDATES, rankChunks } from './chunk-ranking.js'
import { matchExpression } from './code-tokens.js'
import { isLocked } from './store-errors.js'
import { after, SCOPE_SQL, scopeArgs, scopeSql } from './scope-sql.js'
import { referenceQueries, type ReferenceQueries } from './reference-reader.js'
import { mapQueries, type MapQueries } from './map-reader.js'
import { FIELD_WEIGHTS, metaOf, NOT_INDEXED, SCHEMA_VERSION, schemaOf, type ChunkRow, type NameMatch, type PathScope, type Sqlite, type StoreCounts, type SymbolRow } from './index-schema.js'

/** The queries of an index file, on a read-only connection of this thread. */
export interface IndexReader {
  /** Definitions by lower-cased name; ranked by the caller. At most `limit` rows. */
  findSymbols(nameLower: string, match: NameMatch, kind: string | undefined, scope: PathScope, limit: number): SymbolRow[]
  /** At most `limit` chunks holding any of the terms, best first (see rankChunks); scores below 0, lower is better. */
  searchChunks(terms: readonly string[], scope: PathScope, limit: number): ChunkRow[]
  /** The chunks with these ids that still exist (score 0), in no particular order. */
  chunksById(ids: readonly number[]): ChunkRow[]
  /** What the writer last recorded: the counts, whether a scan ever finished, and when (ms since the epoch). */
  state(): { counts: StoreCounts, complete: boolean, built?: number }
  /** Where names are used (find_references, the call graph, the repository map). */
  references: ReferenceQueries
  /** What the repository map reads: files, their definitions, how much each name is used. */
  map: MapQueries
  close(): void
}

/** A LIKE pattern for a literal substring (`\` escapes the wildcards). */
const likeLiteral = (text: string): string => `%${text.replace(/[\\%_]/g, c => `\\${c}`)}%`

/** bm25 with each column's weight. */
const BM25 = `bm25(chunks_fts, ${FIELD_WEIGHTS.name}, ${FIELD_WEIGHTS.head}, ${FIELD_WEIGHTS.path}, ${FIELD_WEIGHTS.body})`

const NO_COUNTS: StoreCounts = { files: 0, chunks: 0, symbols: 0 }

let collect: (() => void) | undefined
/**
 * Lets go of connections closed with statements still prepared. @photostructure/sqlite 1.2's close() drops its
 * list of statements without finalizing them, so such a connection keeps its file open (and, in WAL mode, its
 * place in the log) until the collector finalizes them — in an idle process, never: a shared index's replaced
 * generation would stay on disk for good. One full collection after the close finalizes them (the finalizers run
 * a tick later). node:sqlite finalizes on close; so will this once it can be used (Node ≥ 22.13).
 */
export function collectClosedConnections (): void {
  if (collect === undefined) {
    v8.setFlagsFromString('--expose-gc')
    collect = vm.runInNewContext('gc') as () => void
  }
  collect()
}

/** collectClosedConnections, then the turn in which the finalizers it queued run. */
export async function finalizeClosedConnections (): Promise<void> {
  collectClosedConnections()
  await new Promise(resolve => setImmediate(resolve))
}

/**
 * Opens the index at `file` read-only, or returns undefined when it is not there or not (yet) an index of this
 * schema. `immutable`: the file is never written while open (a published shared index, replaced only by
 * rename), so SQLite takes no locks and needs no write-ahead log beside it — what a read-only or network
 * volume needs.
 */
export function openIndexReader (sqlite: Sqlite, file: string, immutable = false): IndexReader | undefined {
  if (!fs.existsSync(file)) return undefined
  const url = pathToFileURL(file)
  if (immutable) url.searchParams.set('immutable', '1')
  let db: DatabaseSyncInstance
  try {
    db = new sqlite.DatabaseSync(immutable ? url.href : file, { readOnly: true, timeout: 5000 })
  } catch {
    return undefined
  }
  if (schemaOf(db) !== SCHEMA_VERSION) {
    db.close()
    return undefined
  }
  const symbolQueries = new Map<string, StatementSyncInstance>()
  const ranking = new Map<boolean, StatementSyncInstance>()
  const counting = new Map<number, StatementSyncInstance>()
  /** Counts, for the ids in a JSON array, how many of `groups` MATCH expressions each matches. */
  const heldStatement = (groups: number): StatementSyncInstance => {
    let statement = counting.get(groups)
    if (statement === undefined) {
      const lists = Array.from({ length: groups }, () => 'SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ?').join(' UNION ALL ')
      statement = db.prepare(`SELECT rowid AS id, count(*) AS n FROM (${lists}) WHERE +rowid IN (SELECT value FROM json_each(?)) GROUP BY rowid`)
      counting.set(groups, statement)
    }
    return statement
  }

  /**
   * The best chunks for a MATCH expression. Unscoped, the full-text index ranks and cuts alone, and only the
   * winners are joined to their chunk and file (joining every match first cost a third of the query); a path
   * scope needs the join to filter.
   */
  function rankedStatement (scoped: boolean): StatementSyncInstance {
    let statement = ranking.get(scoped)
    if (statement === undefined) {
      statement = db.prepare(scoped
        ? `SELECT c.id, f.path, c.start, c.end, c.symbol, c.kind, ${BM25} AS score FROM chunks_fts JOIN chunks c ON c.id = chunks_fts.rowid JOIN files f ON f.id = c.file WHERE chunks_fts MATCH ?${SCOPE_SQL} ORDER BY score, c.id LIMIT ?`
        : `SELECT c.id, f.path, c.start, c.end, c.symbol, c.kind, r.score FROM (SELECT rowid AS id, ${BM25} AS score FROM chunks_fts WHERE chunks_fts MATCH ? ORDER BY score, rowid LIMIT ?) r ` +
          'JOIN chunks c ON c.id = r.id JOIN files f ON f.id = c.file ORDER BY r.score, c.id')
      ranking.set(scoped, statement)
    }
    return statement
  }

  return {
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
      if (terms.length === 0) return []
      const ranked = (op: 'AND' | 'OR', n: number): ChunkRow[] =>
        rankedStatement(scope !== undefined).all(matchExpression(terms, op), ...scopeArgs(scope), n) as unknown as ChunkRow[]
      // The candidates: the chunks holding every word, when there are enough of them — ranking them costs a
      // tenth of ranking every chunk holding any word (a keyword query over the Linux tree: 8 ms against 80) —
      // else the best of those holding any. Chunks past the candidates follow in BM25's order.
      let candidates = terms.length > 1 ? ranked('AND', CANDIDATES) : []
      let rest: ChunkRow[]
      if (candidates.length < ALL_WORDS_ENOUGH) {
        const rows = ranked('OR', Math.max(limit, CANDIDATES))
        candidates = rows.slice(0, CANDIDATES)
        rest = rows.slice(CANDIDATES)
      } else {
        const pooled = new Set(candidates.map(row => row.id))
        rest = limit > candidates.length ? ranked('OR', limit + candidates.length).filter(row => !pooled.has(row.id)) : []
      }
      // How many of the words (each with its forms) each candidate holds, counted by SQLite over the words' own
      // lists: `+rowid` keeps the candidates from being pushed into the full-text index as lookups one by one
      // (ten times slower), and no list is carried into JavaScript. Every candidate holds one word at least.
      const groups = [...new Set(terms.map(term => matchExpression([term])))]
      const held = new Map((heldStatement(groups.length).all(...groups, JSON.stringify(candidates.map(row => row.id))) as Array<{ id: number, n: number }>).map(r => [r.id, r.n]))
      return [...rankChunks(candidates, id => held.get(id) as number, groups.length), ...rest].slice(0, limit)
    },
    chunksById (ids) {
      if (ids.length === 0) return []
      // One statement per call, as many placeholders as ids (a page asks for at most a few hundred).
      return db.prepare(`SELECT c.id, f.path, c.start, c.end, c.symbol, c.kind, 0 AS score FROM chunks c JOIN files f ON f.id = c.file WHERE c.id IN (${ids.map(() => '?').join(', ')})`)
        .all(...ids) as unknown as ChunkRow[]
    },
    references: referenceQueries(db),
    map: mapQueries(db, NOT_INDEXED),
    state () {
      const counts = metaOf(db, 'counts')
      const built = metaOf(db, 'built')
      return { counts: counts === undefined ? NO_COUNTS : JSON.parse(counts) as StoreCounts, complete: metaOf(db, 'complete') === '1', ...(built === undefined ? {} : { built: Number(built) }) }
    },
    close: () => db.close()
  }
}

/**
 * A reader that follows the file at `file`: opened when it appears, and opened again when another file takes its
 * name (a rebuilt schema, a newly published shared index) — checked at most every `checkMs` once open. Queries
 * before the file exists answer nothing.
 */
export function followIndexFile (sqlite: Sqlite, file: string, immutable: boolean, checkMs = 1000): IndexReader & { current(): IndexReader | undefined, check(): void } {
  let reader: IndexReader | undefined
  let inode: number | undefined
  let checkedAt = -Infinity
  let lastState: ReturnType<IndexReader['state']> = { counts: NO_COUNTS, complete: false }
  function check (): void {
    checkedAt = Date.now()
    const now = fs.statSync(file, { throwIfNoEntry: false })?.ino
    if (now === inode && reader !== undefined) return
    const replaced = reader
    reader = now === undefined ? undefined : openIndexReader(sqlite, file, immutable)
    inode = reader === undefined ? undefined : now
    if (replaced !== undefined) {
      replaced.close()
      collectClosedConnections()
    }
  }
  // Until the file is there and readable it is looked for on every use (a stat); then at most every checkMs.
  const live = (): IndexReader | undefined => {
    if (reader === undefined || Date.now() - checkedAt >= checkMs) check()
    return reader
  }
  return {
    findSymbols: (...args) => live()?.findSymbols(...args) ?? [],
    searchChunks: (...args) => live()?.searchChunks(...args) ?? [],
    chunksById: (ids) => live()?.chunksById(ids) ?? [],
    state () {
      // A rollback-journal file (a staging build) is locked while its writer commits a batch; on a loaded machine
      // that outlasts the busy wait. What the writer recorded before is the answer then, not a failed build.
      try {
        lastState = live()?.state() ?? { counts: NO_COUNTS, complete: false }
      } catch (err) {
        if (!isLocked(err)) throw err
      }
      return lastState
    },
    references: {
      counts: (...args) => live()?.references.counts(...args) ?? [],
      sites: (...args) => live()?.references.sites(...args) ?? [],
      calls: (...args) => live()?.references.calls(...args) ?? [],
      imports: (files) => live()?.references.imports(files) ?? new Map(),
      outlines: (files) => live()?.references.outlines(files) ?? new Map(),
      fileIds: (paths) => live()?.references.fileIds(paths) ?? new Map()
    },
    map: {
      files: (scope) => live()?.map.files(scope) ?? [],
      definitions: (files, kinds) => live()?.map.definitions(files, kinds) ?? [],
      uses: (tokens) => live()?.map.uses(tokens) ?? [],
      definers: (names) => live()?.map.definers(names) ?? new Map(),
      paths: (files) => live()?.map.paths(files) ?? new Map()
    },
    current: live,
    check,
    close () {
      if (reader === undefined) return
      reader.close()
      reader = undefined
      inode = undefined
      collectClosedConnections()
    }
  }
}
