/**
 * Why the index's file cannot be written, read from the error: the disk (or the index's size cap) is full, the
 * file system is read-only or refuses us, it failed (I/O), or the file cannot be opened. Undefined for any other
 * error (a bug, a file gone mid-scan), which does not make the store unavailable.
 */
export type StoreProblem = 'disk-full' | 'read-only' | 'io-error' | 'cannot-open'

// SQLite primary result codes (the low byte of an extended one): https://sqlite.org/rescode.html
const SQLITE_PROBLEMS: Record<number, StoreProblem> = { 8: 'read-only', 10: 'io-error', 13: 'disk-full', 14: 'cannot-open' }
const ERRNO_PROBLEMS: Record<string, StoreProblem> = { ENOSPC: 'disk-full', EDQUOT: 'disk-full', EROFS: 'read-only', EACCES: 'read-only', EPERM: 'read-only', EIO: 'io-error' }

/** SQLite's primary result code of an error (the low byte of an extended one), if it carries one. */
function sqliteCodeOf (err: unknown): number | undefined {
  const e = err as { errcode?: unknown, sqliteCode?: unknown } | null
  if (e === null || typeof e !== 'object') return undefined
  const code = typeof e.sqliteCode === 'number' ? e.sqliteCode : typeof e.errcode === 'number' ? e.errcode : undefined
  return code === undefined ? undefined : code & 0xff
}

/** Whether an error is SQLite's SQLITE_BUSY or SQLITE_LOCKED: another connection held the file past the busy wait. */
export function isLocked (err: unknown): boolean {
  const code = sqliteCodeOf(err)
  return code === 5 || code === 6
}

/** The store problem an error is, if any (SQLite's result code, or a Node errno code). */
export function storeProblemOf (err: unknown): StoreProblem | undefined {
  const sqliteCode = sqliteCodeOf(err)
  if (sqliteCode !== undefined) return SQLITE_PROBLEMS[sqliteCode]
  const code = (err as { code?: unknown } | null)?.code
  return typeof code === 'string' ? ERRNO_PROBLEMS[code] : undefined
}
