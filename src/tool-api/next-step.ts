import { sentence, toolError, type NextStep, type NextStepFacts, type ToolError } from '../base/errors.js'
import type { ServiceName, Services } from '../services/index.js'
import type { CatalogEntry } from '../services/catalog.js'
import { mentionsAny, pruneMentions } from '../services/prune-mentions.js'

/**
 * Every sentence that tells the model which tool to call after a service's error: the one place they are written.
 * Each alternative is a clause of its own (`;`, `, or`), so a server that leaves a tool out keeps the others.
 */
const SENTENCES: Record<NextStep, (facts: NextStepFacts) => string> = {
  'describe-path': ({ path, field }) => `ask for another path; get_file_info ${field ?? 'path'}="${path ?? ''}" shows what is known about it`,
  'list-now': () => 'list_directory shows what is there now; find_files finds it by name',
  'list-layout': () => 'list_directory shows the real layout; find_files finds a file by name',
  'list-from-root': ({ field }) => `use a path relative to the workspace root, e.g. ${field ?? 'path'}="src" (list_directory path="." shows the top level)`,
  'list-links': () => 'list_directory shows links and where they point; get_file_info shows where one link points',
  'inside-only': () => 'only paths inside the workspace can be used; list_directory shows links and where they point',
  'list-or-find': () => 'list_directory shows what exists; find_files finds it by name',
  'list-the-directory': ({ path }) => `list_directory path="${path ?? '.'}" lists it`,
  'list-commits': () => 'check the arguments; git_log lists the commits that exist',
  'name-a-commit': () => 'use a hash, a branch or tag name, or HEAD~N; git_log lists the commits',
  'read-or-grep': () => 'read_files reads the file; search_regex finds definitions by pattern',
  'describe-file': () => 'get_file_info describes the file; read_files reads it',
  'describe-damaged': () => 'the file may be damaged; get_file_info describes it',
  'describe-damaged-or-encrypted': () => 'the file may be damaged or encrypted; get_file_info describes it',
  'rank-by-words': () => 'search_code ranks code by its words without embeddings; get_workspace_info shows the index\'s state',
  'grep-for-definitions': () => 'search_regex finds definitions and uses by pattern; read_files reads a file whole',
  'list-and-read': () => 'find_files finds files by name; list_directory lists folders; read_files reads them',
  'read-without-history': () => 'read_files and list_directory serve the files as they are now; get_workspace_info says which roots have history'
}

const NONE: ReadonlySet<string> = new Set()

/**
 * Adds the hint for the next step a service named to the error's text, once, and takes out of any hint what it
 * says of a tool in `unserved` (tools this server does not serve); returns the error.
 */
export function withNextStep (err: ToolError, unserved: ReadonlySet<string> = NONE): ToolError {
  if (err.next !== undefined) {
    const hint = pruneMentions(SENTENCES[err.next.step](err.next), unserved)
    if (hint !== '') err.message = `${err.message} Hint: ${sentence(hint)}`
    delete err.next
  } else if (err.hint !== undefined && mentionsAny(err.hint, unserved)) {
    const hint = pruneMentions(err.hint, unserved)
    err.message = err.message.slice(0, err.message.length - ` Hint: ${sentence(err.hint)}`.length) + (hint === '' ? '' : ` Hint: ${sentence(hint)}`)
    err.hint = hint
  }
  return err
}

/** Why `tool` is not served, from the first of its `missing` services the services said why of; else undefined. */
export function absentError (tool: string, missing: ServiceName[], absent: Services['absent']): ToolError | undefined {
  const absence = missing.map(name => absent?.[name]).find(found => found !== undefined)
  if (absence === undefined) return undefined
  return withNextStep(toolError(absence.code, `${tool} is not offered by this server: ${absence.reason}`, { step: absence.step }))
}

/** What a call to a tool the operator left out gets: the reason, and the served tools of its category (else where the list is) to call instead. */
export function excludedError (tool: string, category: string, served: CatalogEntry[]): ToolError {
  const same = served.filter(e => e.category === category).map(e => e.name)
  const hint = same.length > 0
    ? `the ${category} tools it serves: ${same.join(', ')}`
    : served.some(e => e.name === 'get_workspace_info') ? 'get_workspace_info lists the tools it serves' : 'tools/list lists the tools it serves'
  return toolError('TOOL_EXCLUDED', `${tool} is not offered by this server: its operator left it out (--tools / --exclude-tools)`, hint)
}
