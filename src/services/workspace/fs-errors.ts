import { toolError, type ToolError } from '../../base/errors.js'

/** An error's errno code, if it has one. */
export const errCode = (err: unknown): string | undefined => (err as NodeJS.ErrnoException)?.code

/** The tool error for a file-system error about `shown` (the path as the client wrote it); others are rethrown. */
export function fsError (err: unknown, shown: string, field = 'path'): ToolError {
  switch (errCode(err)) {
    case 'EACCES':
    case 'EPERM':
      return toolError('PERMISSION_DENIED', `"${shown}" is not readable by the server`, { step: 'describe-path', path: shown, field })
    case 'ENOENT':
      return toolError('PATH_NOT_FOUND', `"${shown}" does not exist (it may have just been removed)`, { step: 'list-now' })
    case 'ELOOP':
      return toolError('INVALID_PATH', `"${shown}" is a symbolic link loop; it cannot be resolved`, 'name the link\'s target instead')
    case 'ENAMETOOLONG':
      return toolError('INVALID_PATH', `"${shown.slice(0, 80)}…" is too long`, 'use a shorter path')
    case 'ENOTDIR':
      return toolError('NOT_A_DIRECTORY', `a parent of "${shown}" is a file, not a directory`, { step: 'list-layout' })
    case 'EINVAL':
      // readlink on what lstat had just seen as a link: the path changed under us.
      return toolError('INVALID_PATH', `"${shown}" changed while it was being resolved`, 'call again')
    default:
      throw err
  }
}
/** fsError for an errno code the jail's own walk reported. */
export const fsErrorFor = (code: string, shown: string, field: string): ToolError => fsError(Object.assign(new Error(code), { code }), shown, field)

/** Why a folder could not be listed, from its fs error's code (a note in the walk's answer, not an error). */
export const errText = (err: unknown): string => {
  const code = errCode(err)
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied'
  if (code === 'ENOENT') return 'removed while listing'
  if (code === 'ESCAPED') return 'replaced by a link out of the workspace while listing; not followed'
  return `not readable (${code ?? 'error'})`
}
