import type { CatalogEntry } from '../services/catalog.js'
import { TOOL_CATEGORIES } from '../tool-api/define-tool.js'
import { batchField } from './conventions.js'
import { HELP_URI } from './help-resources.js'

type Schema = Record<string, unknown>
const isRecord = (v: unknown): v is Schema => typeof v === 'object' && v !== null && !Array.isArray(v)

/** Tools worth calling first, best first; the first one listed wins. */
const START_WITH = ['get_workspace_info', 'list_directory', 'find_files']

function property (entry: CatalogEntry, name: string): Schema | undefined {
  const props = entry.inputSchema.properties
  return isRecord(props) && isRecord(props[name]) ? props[name] : undefined
}

/**
 * The server `instructions` sent in initialize: what the server is, the categories and their
 * tools, where to start, and the budgets — all read from the published schemas, so it cannot drift.
 */
export function generateInstructions (entries: CatalogEntry[]): string {
  const lines = ['Read-only access to one workspace: navigate it, search it, read it, and learn how to use these tools. Paths are relative to the workspace root.']

  const order: string[] = [...TOOL_CATEGORIES]
  const byCategory = order
    .map(c => [c, entries.filter(e => e.category === c).map(e => e.name)] as const)
    .filter(([, names]) => names.length > 0)
    .map(([c, names]) => `${c}: ${names.join(', ')}`)
  if (byCategory.length > 0) lines.push(`Tools by category — ${byCategory.join('; ')}.`)

  const names = new Set(entries.map(e => e.name))
  const start = START_WITH.filter(n => names.has(n))
  if (start.length > 0) lines.push(`Start with ${start.slice(0, 2).join(', then ')}; search before reading whole files.`)

  const budgets: string[] = []
  for (const entry of entries) {
    const tokens = property(entry, 'max_response_tokens')
    if (tokens !== undefined) {
      budgets.push(`${entry.name} answers within max_response_tokens (default ${String(tokens.default ?? '?')}${typeof tokens.maximum === 'number' ? `, at most ${tokens.maximum}` : ''})`)
    }
    const batch = batchField(entry) ?? '' // no batch field: no property named '' either
    const maxItems = property(entry, batch)?.maxItems
    if (typeof maxItems === 'number') budgets.push(`${entry.name} takes up to ${maxItems} ${batch} per call`)
  }
  if (budgets.length > 0) lines.push(`Budgets: ${budgets.join('; ')}. Long results are paged: follow the footer's next call.`)

  // The help resource is served whatever tools are: the guide is there even where its tool is left out.
  lines.push(`Details and examples for every tool: ${names.has('get_tool_usage_guide') ? 'get_tool_usage_guide, or ' : ''}the resource ${HELP_URI}.`)
  lines.push('Tool errors read `ERROR CODE: message. Hint: next step`.')
  return lines.join('\n')
}
