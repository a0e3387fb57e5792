import type { PathScope } from './index-schema.js'

/** Upper bound of a path range: every path that starts with `prefix` sorts below it (the last code unit + 1). */
export const after = (prefix: string): string => prefix.slice(0, -1) + String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1)

/** Rows of one file or folder (`f` is the files table): the path itself, or any path below it. */
export const SCOPE_SQL = ' AND (f.path = ? OR (f.path >= ? AND f.path < ?))'

/** The SQL narrowing rows to a scope (nothing for everywhere). */
export const scopeSql = (scope: PathScope): string => scope === undefined ? '' : SCOPE_SQL

/** The arguments of scopeSql's placeholders. */
export const scopeArgs = (scope: PathScope): string[] => scope === undefined ? [] : [scope, `${scope}/`, after(`${scope}/`)]
