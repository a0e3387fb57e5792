// The retrieval bench's vectors outlive its index files. A server that finds an index of another schema version
// removes it, vectors and all, and embedding a tree again takes the shared model half an hour (Linux: ~21,700
// chunks at ~13 a second on this machine). So every vector a run's index holds is kept in a cache of the tree's
// own (bench/.retrieval/vectors/<tree>.sqlite, keyed as the index keys them: hash of the chunk's text, model,
// dimensions), and an index file the server about to start would rebuild is made anew here first, in that
// server's schema, holding the cached vectors: the server's scan then writes the chunks, and only chunks whose
// text no vector covers are embedded.
import { existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs'
import path from 'node:path'
import { pathToFileURL } from 'node:url'

const INDEX_FILE = /^index-[0-9a-f]{16}\.sqlite$/

/** The index file in a state folder, or undefined. */
export function indexFileIn (state) {
  const name = existsSync(state) ? readdirSync(state).find(n => INDEX_FILE.test(n)) : undefined
  return name === undefined ? undefined : path.join(state, name)
}

/** The schema module (SCHEMA, SCHEMA_VERSION, schemaOf) of the build a bin belongs to (its dist/src beside dist/bin). */
export async function schemaOfBin (bin) {
  return await import(pathToFileURL(path.join(path.dirname(bin), '..', 'src', 'services', 'code-index', 'index-schema.js')).href)
}

/**
 * Every chunk's vector of the model in an open index (`db`), with its chunk id and its file relative to `root`
 * (the tree the index was built over).
 */
export function indexVectors (db, root, model, dims) {
  return db.prepare('SELECT c.id, f.path, v.vector FROM chunks c JOIN files f ON f.id = c.file JOIN vectors v ON v.hash = c.hash WHERE v.model = ? AND v.dims = ?')
    .all(model, dims)
    .map(r => ({ id: r.id, path: path.relative(root, r.path), vector: new Float32Array(r.vector.buffer.slice(r.vector.byteOffset, r.vector.byteOffset + r.vector.byteLength)) }))
}

const CACHE_TABLE = 'CREATE TABLE IF NOT EXISTS vectors (hash TEXT NOT NULL, model TEXT NOT NULL, dims INTEGER NOT NULL, vector BLOB NOT NULL, PRIMARY KEY (hash, model, dims)) WITHOUT ROWID'

/** Adds the vectors of the index file in `state` to the cache `cacheFile` (those it has already are kept). Returns how many it holds. */
export async function keepVectors (state, cacheFile) {
  const file = indexFileIn(state)
  if (file === undefined) return 0
  const { DatabaseSync } = await import('@photostructure/sqlite')
  mkdirSync(path.dirname(cacheFile), { recursive: true })
  const cache = new DatabaseSync(cacheFile)
  try {
    cache.exec(CACHE_TABLE)
    cache.prepare('ATTACH DATABASE ? AS idx').run(file)
    const hasVectors = cache.prepare("SELECT 1 FROM idx.sqlite_master WHERE name = 'vectors'").get() !== undefined
    if (hasVectors) cache.exec('INSERT OR IGNORE INTO vectors (hash, model, dims, vector) SELECT hash, model, dims, vector FROM idx.vectors')
    cache.exec('DETACH DATABASE idx')
    return cache.prepare('SELECT count(*) AS n FROM vectors').get().n
  } finally {
    cache.close()
  }
}

/**
 * Before a server of `schema` (see schemaOfBin) starts on `state`: an index file there of another schema version
 * — or none, when `like` names the index file another state folder holds for the same roots — becomes an empty
 * index of this schema holding the cached vectors. Returns how many vectors it was given (undefined: left alone).
 */
export async function seedVectors (state, cacheFile, schema, like) {
  const { DatabaseSync } = await import('@photostructure/sqlite')
  let file = indexFileIn(state)
  if (file !== undefined) {
    const db = new DatabaseSync(file, { readOnly: true })
    const version = schema.schemaOf(db)
    db.close()
    if (version === schema.SCHEMA_VERSION) return undefined
    await keepVectors(state, cacheFile)
    for (const suffix of ['', '-wal', '-shm']) rmSync(`${file}${suffix}`, { force: true })
  } else if (like !== undefined) {
    mkdirSync(state, { recursive: true })
    file = path.join(state, path.basename(like))
  } else {
    return undefined
  }
  const db = new DatabaseSync(file)
  try {
    db.exec('BEGIN')
    db.exec(schema.SCHEMA)
    db.prepare("INSERT OR REPLACE INTO meta (key, value) VALUES ('schema', ?)").run(schema.SCHEMA_VERSION)
    db.exec('COMMIT')
    if (!existsSync(cacheFile)) return 0
    db.prepare('ATTACH DATABASE ? AS cache').run(cacheFile)
    db.exec('INSERT OR IGNORE INTO vectors (hash, model, dims, vector) SELECT hash, model, dims, vector FROM cache.vectors')
    db.exec('DETACH DATABASE cache')
    return db.prepare('SELECT count(*) AS n FROM vectors').get().n
  } finally {
    db.close()
  }
}
