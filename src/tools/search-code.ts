import { Type } from '@sinclair/typebox'
import { toolError } from '../base/errors.js'
import { queryTerms, type ChunkRow } from '../services/code-index/index.js'
import { MAX_RESPONSE_TOKENS, MIN_RESPONSE_TOKENS, fitPage } from '../tool-kit/budget.js'
import { chunkHeading, ChunkResultFields, chunkResult, indexNotes, readWholeLine, MAX_QUERY_TERMS, scopeOf, shownPath, snippetOf, INDEX_TASK } from '../tool-kit/code-index-common.js'
import { pruneLines } from '../services/prune-mentions.js'
import { defineTool, Inject, type ToolResult } from '../tool-api/define-tool.js'
import { paginate, pagingFooter, PaginationOutput, withoutDefaults } from '../tool-kit/paging.js'

/** Deepest a page may reach into the ranking (offset + page_size). */
const MAX_CANDIDATES = 1000

/** structuredContent of search_code: the ranked chunks on this page. */
export const SearchCodeOutput = Type.Object({
  results: Type.Array(Type.Object({
    ...ChunkResultFields,
    score: Type.Number({ description: 'BM25 relevance, higher is better' })
  }), { description: 'Best first' }),
  terms: Type.Array(Type.String(), { description: 'Search terms the query became' }),
  pagination: PaginationOutput
})

const SearchCodeInput = Type.Object({
  query: Type.String({ minLength: 1, maxLength: 500, description: 'Words or identifiers, e.g. "retry failed upload" (finds retryFailedUpload)' }),
  path: Type.Optional(Type.String({ description: 'Only code in this file or folder, e.g. "src/services"' })),
  page_size: Type.Optional(Type.Integer({ minimum: 1, maximum: 50, default: 10, description: 'Chunks per page, e.g. 10' })),
  offset: Type.Optional(Type.Integer({ minimum: 0, default: 0, description: 'next_offset of the previous page, e.g. 10' })),
  max_response_tokens: Type.Optional(Type.Integer({ minimum: MIN_RESPONSE_TOKENS, maximum: MAX_RESPONSE_TOKENS, default: 8000, description: 'Token budget, e.g. 8000' })),
  workspace: Inject('workspace'),
  codeIndex: Inject('codeIndex'),
  tokenizer: Inject('tokenizer')
})

interface Hit extends ChunkRow { shown: string }

/** Ranked (BM25) search over code chunks with code-aware words: identifiers split at camelCase and snake_case. */
export const searchCode = defineTool({
  name: 'search_code',
  title: 'Search Code',
  category: 'search',
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  description: 'Search code by words and rank the functions and classes that match best — "retry upload" finds retryFailedUpload — with the lines that matched.\n\n' +
    'Served from the code index (BM25 over definition-sized chunks). search_regex finds exact text or patterns; find_symbol finds a definition by name.',
  input: SearchCodeInput,
  output: SearchCodeOutput,
  task: INDEX_TASK,
  timeoutHint: 'narrow it with path, or use fewer words',
  examples: [
    { comment: 'Where do we retry failed uploads?', arguments: { query: 'retry failed upload' } },
    { comment: 'Only in one folder, a longer page', arguments: { query: 'parse config file', path: 'src', page_size: 20 } }
  ],
  async run (args, ctx) {
    const { query, path, page_size: pageSize = 10, offset = 0, max_response_tokens: budget = 8000, workspace, codeIndex, tokenizer } = args
    const all = queryTerms(query)
    if (all.length === 0) throw toolError('INVALID_ARGUMENT', `query: "${query.slice(0, 100)}" holds no word to search for (words are letters, digits and _, at least two characters)`, 'pass words or identifiers, e.g. query="retry upload"')
    const terms = all.slice(0, MAX_QUERY_TERMS)
    const scope = await scopeOf(workspace, path, ctx.signal)
    const notes = await indexNotes(codeIndex, ctx)
    if (all.length > terms.length) notes.push(`Note: the query has ${all.length} words; the first ${MAX_QUERY_TERMS} were searched`)
    // Only as many as this page needs, and one more to tell whether a next page exists.
    const want = Math.min(MAX_CANDIDATES, offset + pageSize + 1)
    const rows = codeIndex.searchChunks(terms, scope, want)
    const hits: Hit[] = []
    for (const row of rows) {
      const shown = shownPath(workspace, row.path)
      if (shown !== undefined) hits.push({ ...row, shown })
    }
    // The total counts what was read: a lower bound whenever the index may hold more.
    const page = paginate(hits, offset, pageSize, rows.length >= want)
    const termSet = new Set(terms)
    const snippets = await Promise.all(page.items.map(async hit => await snippetOf(workspace, hit, termSet, ctx)))
    const nextArgs = withoutDefaults({ ...args, offset: undefined }, SearchCodeInput)
    const { text, pagination } = await fitPage(page.pagination, (kept, pagination, cut) => {
      const lines = [`# Code matching ${terms.map(t => `"${t}"`).join(' ')}, best first — chunks holding more of the words, in files that match more, rank higher`, ...notes]
      if (hits.length === 0) lines.push(...pruneLines([`No indexed code has these words. search_regex pattern="${terms.join('|')}" ignore_case=true searches every file as text.`], ctx.unserved))
      page.items.slice(0, kept).forEach((hit, i) => {
        lines.push(chunkHeading(hit), ...snippets[i])
      })
      if (cut !== undefined) lines.push(cut)
      if (kept > 0) lines.push(...readWholeLine(page.items[0], ctx.unserved))
      lines.push(pagingFooter('search_code', pagination, nextArgs, 'Chunks'))
      return lines.join('\n')
    }, 'chunk', budget, tokenizer, ctx.signal)
    const result: ToolResult = {
      content: [{ type: 'text', text }],
      structuredContent: {
        results: page.items.slice(0, pagination.returned).map(h => ({ ...chunkResult(h), score: Math.round(-h.score * 1000) / 1000 })),
        terms,
        pagination
      }
    }
    return result
  }
})
