import { Type, type Static } from '@sinclair/typebox'
import { INJECT_KEY } from '../tool-api/define-tool.js'

/** Pagination facts every listing or search returns (also its structuredContent shape). */
export const PaginationOutput = Type.Object({
  offset: Type.Integer({ description: 'Index of the first item' }),
  page_size: Type.Integer({ description: 'Page size applied' }),
  returned: Type.Integer({ description: 'Items on this page' }),
  total: Type.Integer({ description: 'Items in the sorted result set' }),
  total_is_lower_bound: Type.Boolean({ description: 'True if total is a lower bound' }),
  has_more: Type.Boolean({ description: 'True if a next page exists' }),
  next_offset: Type.Integer({ description: 'Offset of the next page, -1 if none' })
}, { description: 'Position in the sorted results' })
/** Pagination facts of one page. */
export type Pagination = Static<typeof PaginationOutput>

/** One page of an already sorted array. */
export interface Page<T> {
  items: T[]
  pagination: Pagination
}

/** Compares strings by UTF-16 code units (the services' one order, re-exported for the tools that page). */
export { compareText } from '../services/compare-text.js'

/** The pagination of items offset..offset+pageSize of `total` sorted items (an offset past the end: an empty page). */
export function pageOfCount (total: number, offset: number, pageSize: number, totalIsLowerBound = false): Pagination {
  const start = Math.max(0, Math.floor(offset))
  const size = Math.max(1, Math.floor(pageSize))
  const end = start + Math.max(0, Math.min(size, total - start))
  const hasMore = end < total
  return { offset: start, page_size: size, returned: end - start, total, total_is_lower_bound: totalIsLowerBound, has_more: hasMore, next_offset: hasMore ? end : -1 }
}

/** Slices one page out of a sorted array; an offset past the end yields an empty page. */
export function paginate<T> (sorted: readonly T[], offset: number, pageSize: number, totalIsLowerBound = false): Page<T> {
  const pagination = pageOfCount(sorted.length, offset, pageSize, totalIsLowerBound)
  return { items: sorted.slice(pagination.offset, pagination.offset + pagination.returned), pagination }
}

/** The arguments whose value differs from the schema's default, services left out: a footer repeats only what the caller chose. */
export function withoutDefaults (args: Record<string, unknown>, schema: { properties: Record<string, { default?: unknown, [INJECT_KEY]?: unknown }> }): Record<string, unknown> {
  const kept: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(args)) {
    const property = schema.properties[key]
    // An injected service is an argument of run, never of a call a client can make.
    if (property?.[INJECT_KEY] !== undefined) continue
    const fallback = property?.default
    if (value !== undefined && (fallback === undefined || JSON.stringify(value) !== JSON.stringify(fallback))) kept[key] = value
  }
  return kept
}

/** Renders a call the model can copy: `tool key=value …` with JSON values, absent values skipped. */
export function formatCall (tool: string, args: Record<string, unknown>): string {
  const parts = [tool]
  for (const [key, value] of Object.entries(args)) {
    if (value !== undefined) parts.push(`${key}=${JSON.stringify(value)}`)
  }
  return parts.join(' ')
}

/**
 * The one-line pagination footer: `Results 101–200 of 312 | next: find_files … offset=200`.
 * `nextArgs` are the call's own arguments (without offset); the footer adds `offset=next_offset`.
 */
export function pagingFooter (tool: string, p: Pagination, nextArgs: Record<string, unknown>, noun = 'Results'): string {
  const total = `${p.total}${p.total_is_lower_bound ? '+' : ''}`
  const range = p.returned === 0 ? `${noun} 0 of ${total}` : `${noun} ${p.offset + 1}–${p.offset + p.returned} of ${total}`
  const next = p.has_more ? formatCall(tool, { ...nextArgs, offset: p.next_offset }) : 'none'
  return `${range} | next: ${next}`
}
