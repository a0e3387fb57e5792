import { TOOL_ERROR_CODES } from '../base/errors.js'
import type { CatalogEntry } from '../services/catalog.js'
import type { ToolExample } from '../tool-api/define-tool.js'
import type { Overlay } from './overlay.js'
import { mentionsAny, pruneMentions } from '../services/prune-mentions.js'

/** How far a tool's documentation has come: no overlay entry, prose only, or prose + examples + return note. */
export type DocState = 'SchemaOnly' | 'Documented' | 'Complete'

/** Most examples per tool, and most lines of pretty-printed JSON per example. */
export const MAX_EXAMPLES = 5
/** Lines of pretty-printed JSON one example may take. */
export const MAX_EXAMPLE_LINES = 10

/** Everything the guide shows for one tool, after validation against the live schema. */
export interface ToolDocs {
  state: DocState
  /** Longer description from the overlay (undefined → the guide shows the registry text + `[Description pending]`). */
  description?: string
  returns?: string
  errors: string[]
  seeAlso: string[]
  /** Only the examples that validate against the tool's input schema. */
  examples: ToolExample[]
}

/** A documentation problem found while resolving the overlay (reported by `check`, logged at startup). */
export interface DocProblem {
  tool: string
  message: string
}

/** The overlay resolved against one registry. */
export interface ResolvedDocs {
  tools: Map<string, ToolDocs>
  problems: DocProblem[]
}

const KNOWN_CODES = new Set<string>(TOOL_ERROR_CODES)

/** Example arguments as the guide shows them: one line when short, indented otherwise. */
export function exampleJson (args: Record<string, unknown>): string {
  const line = JSON.stringify(args)
  return line.length <= 100 ? line : JSON.stringify(args, null, 2)
}

function checkedExamples (entry: CatalogEntry, examples: ToolExample[], source: string, problems: DocProblem[]): ToolExample[] {
  const valid: ToolExample[] = []
  examples.forEach((example, i) => {
    const where = `${source} example ${i + 1} ("${example.comment}")`
    const errors = entry.validate(example.arguments)
    const lines = exampleJson(example.arguments).split('\n').length
    if (errors.length > 0) {
      problems.push({ tool: entry.name, message: `${where} does not fit the input schema: ${errors.join('; ')} — fix the arguments or the schema` })
    } else if (lines > MAX_EXAMPLE_LINES) {
      problems.push({ tool: entry.name, message: `${where} is ${lines} lines of JSON; keep it to ${MAX_EXAMPLE_LINES}` })
    } else {
      valid.push(example)
    }
  })
  return valid
}

/** Tool names a description mentions in backticks or as bare snake_case words. */
function mentionedTools (text: string, names: Set<string>, self: string): string[] {
  const found: string[] = []
  for (const word of text.match(/[a-z][a-z0-9]*(?:_[a-z0-9]+)+/g) ?? []) {
    if (word !== self && names.has(word) && !found.includes(word)) found.push(word)
  }
  return found
}

/**
 * Validates the overlay against the registry: every example against its tool's input schema,
 * error codes against TOOL_ERROR_CODES, see-also names and entry names against the tool list (and the
 * tools defined but `unlisted` for want of a service or by the operator's choice).
 * Invalid examples are dropped from the result (never rendered) and reported as problems. What the guide shows names
 * no `unlisted` tool: the overlay's prose loses what it says of them, and an example that names one is left out.
 */
export function resolveDocs (entries: CatalogEntry[], overlay: Overlay, unlisted: readonly string[] = []): ResolvedDocs {
  const problems: DocProblem[] = overlay.problems.map(message => ({
    tool: overlay.status === 'corrupt' ? '(overlay)' : message.split(/[.:[]/)[0],
    message
  }))
  const names = new Set(entries.map(e => e.name))
  const unserved = new Set(unlisted)
  const tools = new Map<string, ToolDocs>()

  for (const name of Object.keys(overlay.tools)) {
    // A tool that exists but is not listed in this deployment (its service is absent) keeps its entry.
    if (!names.has(name) && !unlisted.includes(name)) problems.push({ tool: name, message: `overlay entry for a tool that is not registered — remove it from ${overlay.file} or fix the name` })
  }

  for (const entry of entries) {
    const o = overlay.tools[entry.name] ?? {}
    const examples = [
      ...checkedExamples(entry, entry.examples, 'definition', problems),
      ...checkedExamples(entry, o.examples ?? [], 'overlay', problems)
    ]
    if (examples.length > MAX_EXAMPLES) {
      problems.push({ tool: entry.name, message: `${examples.length} examples; keep the ${MAX_EXAMPLES} most useful` })
      examples.length = MAX_EXAMPLES
    }
    const errors = (o.errors ?? []).filter(code => {
      if (KNOWN_CODES.has(code)) return true
      problems.push({ tool: entry.name, message: `error code '${code}' is not in TOOL_ERROR_CODES (src/base/errors.ts)` })
      return false
    })
    // A see-also target may be unlisted in this deployment (its service is not configured): left out, not a problem.
    const seeAlso = (o.see_also ?? []).filter(other => names.has(other))
    for (const other of mentionedTools(`${entry.description}\n${o.description ?? ''}`, names, entry.name)) {
      if (!seeAlso.includes(other)) seeAlso.push(other)
    }
    const state: DocState = o.description === undefined
      ? 'SchemaOnly'
      : examples.length > 0 && o.returns !== undefined ? 'Complete' : 'Documented'
    const description = o.description === undefined ? undefined : pruneMentions(o.description, unserved)
    const returns = o.returns === undefined ? undefined : pruneMentions(o.returns, unserved)
    const shown = examples.filter(example => !mentionsAny(`${example.comment} ${JSON.stringify(example.arguments)}`, unserved))
    tools.set(entry.name, { state, description, returns, errors, seeAlso, examples: shown })
  }
  return { tools, problems }
}
