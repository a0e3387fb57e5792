// What went wrong with the index's store, in the words the model and the operator read (get_workspace_info,
// the code index tools' errors, /readyz): the state folder named by its setting, never by its path.
import { formatBytes } from '../byte-size.js'
import { withoutServerPaths } from '../server-paths.js'
import type { IndexProblem } from './code-index.js'

/** How an answer names the state folder: by its setting, never by its path (docs/errors.md; the log line has the path). */
const STATE_FOLDER = 'the state folder (--state-dir)'

/** A store's or thread's own words for an answer: the index file and state folder named, no other server path. */
export function storeWords (detail: string, problem?: Pick<IndexProblem, 'stateDir' | 'file'>): string {
  return withoutServerPaths(detail, problem === undefined ? [] : [[problem.file, 'the index file'], [problem.stateDir, STATE_FOLDER]])
}

/** What went wrong with the index's store, in one sentence for the model (get_workspace_info, /readyz): no server path. */
export function problemText (problem: IndexProblem): string {
  const room = [
    problem.freeBytes === undefined ? '' : `${formatBytes(problem.freeBytes)} free`,
    problem.neededBytes === undefined ? '' : `the index needs about ${formatBytes(problem.neededBytes)} for this workspace`
  ].filter(s => s !== '').join('; ')
  const figures = room === '' ? '' : ` (${room})`
  const detail = storeWords(problem.detail, problem)
  switch (problem.kind) {
    case 'disk-full': return `the code index cannot be written: the disk of ${STATE_FOLDER} is full${figures}`
    case 'size-limit': return `the code index reached its size limit, --index-max-mb${figures}`
    case 'read-only': return `the code index cannot be written: ${STATE_FOLDER} is read-only or not writable by this server (${detail})`
    case 'io-error': return `the code index cannot be written: the disk of ${STATE_FOLDER} failed with an I/O error (${detail})`
    case 'cannot-open': return `the code index file in ${STATE_FOLDER} cannot be opened (${detail})`
    case 'missing': return `no shared code index has been published in ${STATE_FOLDER} for these roots`
  }
}
