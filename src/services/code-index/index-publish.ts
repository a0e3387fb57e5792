import fs from 'node:fs'
import path from 'node:path'
import { removeIndexFile } from './index-file.js'
import { SCHEMA_VERSION, schemaOf, type Sqlite } from './index-schema.js'

/** The staging file a build of `published` writes, beside it (so the rename that publishes it stays on one disk). */
export const stagingOf = (published: string): string => `${published}.building-${process.pid}`

/**
 * Starts a new generation of a published index: a copy of the current one when there is one of this schema
 * (VACUUM INTO, so it is whole, compact, and holds whatever a writer left in its log), to be refreshed by a scan;
 * else nothing, to be built. Returns the staging file.
 */
export function stageIndex (sqlite: Sqlite, published: string): string {
  const staging = stagingOf(published)
  removeIndexFile(staging)
  if (!fs.existsSync(published)) return staging
  const db = new sqlite.DatabaseSync(published, { readOnly: true, timeout: 10_000 })
  try {
    if (schemaOf(db) === SCHEMA_VERSION) db.exec(`VACUUM INTO '${staging.replace(/'/g, "''")}'`)
  } finally {
    db.close()
  }
  return staging
}

/**
 * Puts a staging file written with a rollback journal (whole on its own) in place of the published one in one
 * step: flushed to disk, then renamed. A reader that has the old one open keeps reading it; the next look finds the new one.
 */
export function publishIndex (staging: string, published: string): void {
  const fd = fs.openSync(staging, 'r+')
  try {
    fs.fsyncSync(fd)
  } finally {
    fs.closeSync(fd)
  }
  fs.renameSync(staging, published)
  for (const suffix of ['-wal', '-shm']) fs.rmSync(`${published}${suffix}`, { force: true })
  // The rename itself is durable once the folder is flushed (where the platform can flush a folder).
  try {
    const dir = fs.openSync(path.dirname(published), 'r')
    try { fs.fsyncSync(dir) } finally { fs.closeSync(dir) }
  } catch /* c8 ignore start */ {
    // Not every file system flushes folders (Linux's all do); the rename still happened.
  } /* c8 ignore stop */
}
