import { sentence, toolError, type NextStep, type NextStepFacts, type ToolError } from '../errors.js'
import type { ServiceName, Services } from '../services/index.js'

/** Every sentence that tells the model which tool to call after a service's error: the one place they are written. */
const SENTENCES: Record<NextStep, (facts: NextStepFacts) => string> = {
  'describe-path': ({ path, field }) => `ask for another path; get_file_info ${field ?? 'path'}="${path ?? ''}" shows what is known about it`,
  'list-now': () => 'list_directory shows what is there now',
  'list-layout': () => 'list_directory shows the real layout',
  'list-from-root': ({ field }) => `use a path relative to the workspace root, e.g. ${field ?? 'path'}="src" (list_directory path="." shows the top level)`,
  'list-links': () => 'list_directory shows links and where they point',
  'inside-only': () => 'only paths inside the workspace can be used; list_directory shows links and where they point',
  'list-or-find': () => 'list_directory or find_files shows what exists',
  'list-the-directory': ({ path }) => `list_directory path="${path ?? '.'}" lists it`,
  'list-commits': () => 'check the arguments; git_log lists the commits that exist',
  'name-a-commit': () => 'git_log lists commits; use a hash from it, a branch or tag name, or HEAD~N',
  'read-or-grep': () => 'read_files reads the file; search_regex finds definitions by pattern',
  'describe-file': () => 'get_file_info describes the file',
  'describe-damaged': () => 'the file may be damaged; get_file_info describes it',
  'describe-damaged-or-encrypted': () => 'the file may be damaged or encrypted; get_file_info describes it',
  'rank-by-words': () => 'search_code ranks code by its words without embeddings; get_workspace_info shows the index\'s state',
  'grep-for-definitions': () => 'search_regex finds definitions and uses by pattern; read_files reads a file whole',
  'list-and-read': () => 'find_files finds files by name, list_directory lists folders and read_files reads them',
  'read-without-history': () => 'read_files and list_directory serve the files as they are now; get_workspace_info says which roots have history'
}

/** Adds the hint for the next step a service named to the error's text, once; returns the error. */
export function withNextStep (err: ToolError): ToolError {
  if (err.next === undefined) return err
  err.message = `${err.message} Hint: ${sentence(SENTENCES[err.next.step](err.next))}`
  delete err.next
  return err
}

/** Why `tool` is not served, from the first of its `missing` services the services said why of; else undefined. */
export function absentError (tool: string, missing: ServiceName[], absent: Services['absent']): ToolError | undefined {
  const absence = missing.map(name => absent?.[name]).find(found => found !== undefined)
  if (absence === undefined) return undefined
  return withNextStep(toolError(absence.code, `${tool} is not offered by this server: ${absence.reason}`, { step: absence.step }))
}
