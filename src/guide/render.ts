import type { CatalogEntry } from '../services/catalog.js'
import { TOOL_CATEGORIES } from '../tool-api/define-tool.js'
import { exampleJson, type ToolDocs } from './docs.js'

type Schema = Record<string, unknown>

/** Category headings, in the guide's fixed order. */
export const CATEGORY_TITLES: Record<string, string> = {
  navigation: 'Navigation',
  search: 'Search',
  read: 'Read',
  history: 'History',
  guide: 'Guide'
}

const isRecord = (v: unknown): v is Schema => typeof v === 'object' && v !== null && !Array.isArray(v)
const cell = (s: string): string => s.replace(/\r?\n/g, ' ').replace(/\|/g, '\\|').trim()
const code = (s: string): string => `\`${s.replace(/`/g, "'")}\``

function typeName (schema: Schema): string {
  if (schema.type === 'array') {
    const items = isRecord(schema.items) ? schema.items : {}
    return `${typeName(items)}[]`
  }
  return typeof schema.type === 'string' ? schema.type : 'any'
}

function range (min: unknown, max: unknown, unit: string): string | undefined {
  const u = unit === '' ? '' : ` ${unit}`
  if (typeof min === 'number' && typeof max === 'number') return `${min}–${max}${u}`
  if (typeof min === 'number') return `≥ ${min}${u}`
  if (typeof max === 'number') return `≤ ${max}${u}`
  return undefined
}

/** The "limits" cell: numeric bounds, lengths, item counts, enum values, pattern. */
export function limitsOf (schema: Schema): string {
  const parts = [
    range(schema.minimum, schema.maximum, ''),
    range(schema.exclusiveMinimum, undefined, '(exclusive)'),
    range(schema.minLength, schema.maxLength, 'chars'),
    range(schema.minItems, schema.maxItems, 'items')
  ].filter((p): p is string => p !== undefined)
  if (Array.isArray(schema.enum)) parts.push(`one of ${schema.enum.map(v => code(String(v))).join(', ')}`)
  if (typeof schema.pattern === 'string') parts.push(`matches ${code(schema.pattern)}`)
  if (isRecord(schema.items)) {
    const inner = limitsOf(schema.items)
    if (inner !== '' && !isRecord(schema.items.properties)) parts.push(`each ${inner}`)
  }
  return parts.join('; ')
}

function paramRows (properties: Schema, required: string[], prefix: string, rows: string[]): void {
  for (const [name, raw] of Object.entries(properties)) {
    if (!isRecord(raw)) continue
    const fullName = prefix + name
    const dflt = 'default' in raw ? code(JSON.stringify(raw.default)) : required.includes(name) ? '**required**' : '—'
    const description = typeof raw.description === 'string' ? raw.description : ''
    rows.push(`| ${code(fullName)} | ${typeName(raw)} | ${cell(dflt)} | ${cell(limitsOf(raw))} | ${cell(description)} |`)
    const items = raw.type === 'array' && isRecord(raw.items) ? raw.items : undefined
    const nested = items ?? raw
    if (isRecord(nested.properties)) {
      const nestedRequired = Array.isArray(nested.required) ? nested.required as string[] : []
      paramRows(nested.properties, nestedRequired, `${fullName}${items === undefined ? '.' : '[].'}`, rows)
    }
  }
}

/** The Markdown parameter table of one published input schema (or a one-line note when it has none). */
export function parameterTable (inputSchema: Schema): string {
  const properties = isRecord(inputSchema.properties) ? inputSchema.properties : {}
  if (Object.keys(properties).length === 0) return '_No parameters._'
  const required = Array.isArray(inputSchema.required) ? inputSchema.required as string[] : []
  const rows = ['| name | type | default | limits | description |', '|---|---|---|---|---|']
  paramRows(properties, required, '', rows)
  return rows.join('\n')
}

/** Options for renderTool / renderSections. */
export interface RenderOptions {
  includeExamples: boolean
}

/** When a tool's call becomes an MCP task, for a client that takes tasks. */
function taskLine (task: NonNullable<CatalogEntry['task']>): string {
  const after = task.afterMs === undefined || task.afterMs === 0 ? 'at once' : `once it has run ${task.afterMs / 1000} s`
  const when = task.support === 'required' ? 'always runs as a task (a client must take tasks)' : `becomes a task ${after} when the client takes tasks (2025-11-25: asked per call; 2026-07-28: the tasks extension), and then waits for what it needs instead of answering in part`
  return `${when}; poll tasks/get, cancel with tasks/cancel.`
}

/** The Markdown section for one tool: purpose, parameters, examples, return format, errors, see-also. */
export function renderTool (entry: CatalogEntry, docs: ToolDocs, options: RenderOptions): string {
  const out = [`### ${entry.name} — ${entry.title}`, '']
  if (docs.description !== undefined) out.push(docs.description.trim())
  else out.push(entry.description.trim(), '', '[Description pending]')
  out.push('', '**Parameters**', '', parameterTable(entry.inputSchema))
  if (options.includeExamples && docs.examples.length > 0) {
    out.push('', '**Examples**')
    for (const example of docs.examples) out.push('', `${example.comment}:`, '', '```json', exampleJson(example.arguments), '```')
  }
  if (docs.returns !== undefined) out.push('', `**Returns:** ${docs.returns.trim()}`)
  if (entry.task !== undefined) out.push('', `**As a task:** ${taskLine(entry.task)}`)
  if (docs.errors.length > 0) out.push('', `**Errors:** ${docs.errors.map(code).join(', ')}`)
  if (docs.seeAlso.length > 0) out.push('', `**See also:** ${docs.seeAlso.map(code).join(', ')}`)
  return out.join('\n')
}

/** Sections per category in the fixed TOOL_CATEGORIES order, each headed with its tool count. */
export function renderSections (entries: CatalogEntry[], docs: Map<string, ToolDocs>, options: RenderOptions): string {
  const sections: string[] = []
  const order: string[] = [...TOOL_CATEGORIES]
  for (const e of entries) if (!order.includes(e.category)) order.push(e.category)
  for (const category of order) {
    const inCategory = entries.filter(e => e.category === category)
    if (inCategory.length === 0) continue
    const count = `${inCategory.length} tool${inCategory.length === 1 ? '' : 's'}`
    sections.push(`## ${CATEGORY_TITLES[category] ?? category} (${count})`)
    for (const entry of inCategory) {
      const toolDocs = docs.get(entry.name) ?? { state: 'SchemaOnly', errors: [], seeAlso: [], examples: [] }
      sections.push(renderTool(entry, toolDocs, options))
    }
  }
  return sections.join('\n\n')
}

/** One line per tool (name, title, first sentence): the fallback when the full guide is too large. */
export function renderIndex (entries: CatalogEntry[]): string {
  return entries.map(e => {
    const first = /^(.+?[.!?])(\s|$)/s.exec(e.description)?.[1] ?? e.description
    return `- ${code(e.name)} (${e.category}) — ${cell(first)}`
  }).join('\n')
}
