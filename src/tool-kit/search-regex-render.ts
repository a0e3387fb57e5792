import type { ContentItem, FileItem, SearchLine, SearchPage } from '../services/search/index.js'
import { pagingFooter, type Pagination } from './paging.js'
import { counted } from './format.js'

/** One rung of the search output's degradation ladder. */
export interface RenderLevel {
  /** Longest line shown, in characters. */
  maxLine: number
  /** Context lines shown before and after each match (at most what was searched for). */
  context: number
  /** Items of the page kept (a prefix of the page). */
  keep: number
  /** Show only per-file counts of the kept items instead of lines. */
  countsOnly: boolean
}

/** What the renderer needs besides the page. */
export interface RenderInput {
  page: SearchPage
  pattern: string
  literal: boolean
  offset: number
  pageSize: number
  /** The call's own arguments (minus offset), for the footer's exact next call. */
  callArgs: Record<string, unknown>
  /** Notices added by the tool (budget, clamps). */
  notices: string[]
  /** Tools this server does not serve: the notices name none. */
  unserved?: ReadonlySet<string>
}

// Not toLocaleString: its first call loads ICU data (~20 ms on the event loop).
const fmt = (n: number): string => String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ',')

/** Shows a line cut to `maxLine` characters with a marker saying how much is missing. */
export function showLine (l: SearchLine, maxLine: number): string {
  const text = l.text.length > maxLine ? l.text.slice(0, maxLine) : l.text
  const shown = text.length
  if (shown === l.length) return text
  return `${l.start > 0 ? '…' : ''}${text} … [line cut: ${fmt(shown)} of ${fmt(l.length)} chars shown]`
}

/** Items the service put on a page (content or files, by mode). */
const itemsOf = (page: SearchPage): number => page.mode === 'content' ? page.content.length : page.files.length

/** Pagination facts for the kept prefix of a page. */
export function keptPagination (page: SearchPage, offset: number, pageSize: number, kept: number): Pagination {
  // An empty page inside the set (its files no longer match: they changed since they were counted) is stepped over
  // whole: a next call at the same offset would only repeat it.
  const end = offset + (itemsOf(page) === 0 ? pageSize : kept)
  const hasMore = end < page.total
  return {
    offset,
    page_size: pageSize,
    returned: kept,
    total: page.total,
    total_is_lower_bound: page.totalIsLowerBound,
    has_more: hasMore,
    next_offset: hasMore ? end : -1
  }
}

/** What an empty page says. */
function emptyPage (page: SearchPage, offset: number): string {
  if (page.total === 0) return page.hidden === undefined ? 'No matches.' : 'No matches in the files the ignore rules leave in (see the note above).'
  return offset >= page.total ? 'No results on this page (offset is past the end).' : 'No results on this page: its files no longer match (they changed since the search was counted).'
}

function header (input: RenderInput): string {
  const { page, pattern, literal } = input
  const shownPattern = literal ? JSON.stringify(pattern) : `/${pattern}/`
  const where = page.path === '.' ? '' : ` under ${page.path}`
  const plus = page.totalIsLowerBound ? '+' : ''
  if (page.mode === 'content') {
    return `${counted(`${fmt(page.total)}${plus}`, 'matching line')} in ${counted(`${fmt(page.fileCount)}${plus}`, 'file')} for ${shownPattern}${where}`
  }
  if (page.mode === 'count') {
    return `${counted(`${fmt(page.total)}${plus}`, 'file')} with ${counted(`${fmt(page.lineCount)}${plus}`, 'matching line')} for ${shownPattern}${where}`
  }
  return `${counted(`${fmt(page.total)}${plus}`, 'file')} match${page.total === 1 && plus === '' ? 'es' : ''} ${shownPattern}${where}`
}

function contentBody (items: ContentItem[], level: RenderLevel): string[] {
  const out: string[] = []
  let i = 0
  while (i < items.length) {
    const path = items[i].path
    const lines = new Map<number, SearchLine>()
    let j = i
    for (; j < items.length && items[j].path === path; j++) {
      const hit = items[j].hit.line
      lines.set(hit, items[j].hit)
      for (const c of items[j].context) if (Math.abs(c.line - hit) <= level.context && !lines.has(c.line)) lines.set(c.line, c)
    }
    out.push(`## ${path}`)
    if (level.countsOnly) {
      out.push(`${j - i} matching line${j - i === 1 ? '' : 's'} on this page`)
    } else {
      const hits = new Set(items.slice(i, j).map(it => it.hit.line))
      let previous = -1
      for (const n of [...lines.keys()].sort((a, b) => a - b)) {
        if (level.context > 0 && previous !== -1 && n > previous + 1) out.push('--')
        const l = lines.get(n)!
        out.push(`${n}${hits.has(n) || (l.match && level.context > 0) ? ':' : '-'} ${showLine(l, level.maxLine)}`)
        previous = n
      }
    }
    i = j
  }
  return out
}

function fileBody (items: FileItem[], mode: SearchPage['mode']): string[] {
  return items.map(f => mode === 'count' ? `${f.path}: ${fmt(f.count)}` : f.path)
}

/** Renders one page at one level of detail: header, notices, results grouped by file, footer. */
export function renderSearch (input: RenderInput, level: RenderLevel): string {
  const { page } = input
  const items = itemsOf(page)
  const kept = Math.min(level.keep, items)
  const lines = [header(input)]
  for (const n of [...page.notices, ...input.notices]) lines.push(`> note: ${n}`)
  lines.push('')
  if (page.mode === 'content') lines.push(...contentBody(page.content.slice(0, kept), level))
  else lines.push(...fileBody(page.files.slice(0, kept), page.mode))
  if (items === 0) lines.push(emptyPage(page, input.offset))
  lines.push('', pagingFooter('search_regex', keptPagination(page, input.offset, input.pageSize, kept), input.callArgs))
  return lines.join('\n')
}
