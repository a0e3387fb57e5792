import { Type } from '@sinclair/typebox'
import { queryTerms, type HybridHit, type SemanticRanking, type SemanticSearch, type CodeIndex } from '../services/code-index/index.js'
import { MAX_RESPONSE_TOKENS, MIN_RESPONSE_TOKENS, fitPage } from '../tool-kit/budget.js'
import { chunkHeading, ChunkResultFields, chunkResult, indexNotes, readWholeLine, MAX_QUERY_TERMS, scopeOf, shownPath, snippetOf, INDEX_TASK } from '../tool-kit/code-index-common.js'
import { pruneLines } from '../services/prune-mentions.js'
import { defineTool, Inject, type ToolResult } from '../tool-api/define-tool.js'
import { clockTime, counted } from '../tool-kit/format.js'
import { paginate, pagingFooter, PaginationOutput, withoutDefaults } from '../tool-kit/paging.js'

/** How deep each ranking (by meaning, by words) is read before fusing; pages reach this far. */
const DEPTH = 200

/** structuredContent of search_semantic: the fused ranking's chunks on this page. */
export const SearchSemanticOutput = Type.Object({
  results: Type.Array(Type.Object({
    ...ChunkResultFields,
    score: Type.Number({ description: 'Both rankings fused by score, 0 to 1, higher is better' }),
    similarity: Type.Optional(Type.Number({ description: 'Cosine similarity to the query, when the chunk has a vector' }))
  }), { description: 'Best first' }),
  pagination: PaginationOutput
})

const SearchSemanticInput = Type.Object({
  query: Type.String({ minLength: 1, maxLength: 1000, description: 'What the code does, in words, e.g. "where do we retry failed uploads"' }),
  path: Type.Optional(Type.String({ description: 'Only code in this file or folder, e.g. "src/services"' })),
  page_size: Type.Optional(Type.Integer({ minimum: 1, maximum: 50, default: 10, description: 'Chunks per page, e.g. 10' })),
  offset: Type.Optional(Type.Integer({ minimum: 0, maximum: DEPTH - 1, default: 0, description: 'next_offset of the previous page, e.g. 10' })),
  max_response_tokens: Type.Optional(Type.Integer({ minimum: MIN_RESPONSE_TOKENS, maximum: MAX_RESPONSE_TOKENS, default: 8000, description: 'Token budget, e.g. 8000' })),
  workspace: Inject('workspace'),
  codeIndex: Inject('codeIndex'),
  semantic: Inject('semantic'),
  tokenizer: Inject('tokenizer')
})

interface Hit extends HybridHit { shown: string }

/** What the answer covers: why it is by words only, or how many chunks have vectors when not all do; else nothing. */
function coverageNote (semantic: SemanticSearch, index: CodeIndex, ranking: SemanticRanking): string[] {
  if (ranking.wordsOnly !== undefined) {
    const { reason, retryAt } = ranking.wordsOnly
    return [`Note: vectors are unavailable (EMBEDDINGS_FAILED: ${reason}) — ranked by words only (as search_code ranks); the server asks the provider again at ${clockTime(retryAt)} and embedding resumes when it answers.`]
  }
  const s = semantic.status()
  const chunks = index.status().chunks
  if (s.vectors >= chunks && s.state !== 'failed') return []
  const covered = `${s.vectors} of ${counted(chunks, 'chunk')} have vectors`
  const why = s.state === 'failed'
    ? `embedding is paused (${s.error ?? 'unknown error'}${s.retryAt === undefined ? '' : `; the provider is asked again at ${clockTime(s.retryAt)}`})`
    : s.capped ? '--embeddings-max-chunks is reached' : 'the rest are being embedded in the background'
  return [`Note: ${covered} — ${why}; the others are found by their words only.`]
}

/** Natural-language search: nearest chunks by embedding, fused with BM25 by score. Offered only with a provider. */
export const searchSemantic = defineTool({
  name: 'search_semantic',
  title: 'Search Code by Meaning',
  category: 'search',
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  description: 'Search code by meaning — "where do we retry failed uploads" finds the retry loop even when it never says "upload" — best first, with its lines.\n\n' +
    'Embeddings of the code index\'s chunks (from the configured provider) ranked by similarity, fused with search_code\'s word ranking. search_code is cheaper when you know the words; find_symbol when you know the name.',
  input: SearchSemanticInput,
  output: SearchSemanticOutput,
  task: INDEX_TASK,
  timeoutHint: 'narrow it with path, or use search_code',
  whenUnavailable: {
    code: 'EMBEDDINGS_NOT_CONFIGURED',
    message: 'search_semantic is not offered by this server: it needs an embeddings provider (--embeddings-url and --embeddings-model) and the code index',
    hint: 'search_code query="…" ranks code by its words; the server\'s operator can set them (or WORKSPACE_MCP_EMBEDDINGS_URL and WORKSPACE_MCP_EMBEDDINGS_MODEL)'
  },
  examples: [
    { comment: 'Find code by what it does', arguments: { query: 'where do we retry failed uploads' } },
    { comment: 'Only in one folder', arguments: { query: 'validate the access token', path: 'src', page_size: 5 } }
  ],
  async run (args, ctx) {
    const { query, path, page_size: pageSize = 10, offset = 0, max_response_tokens: budget = 8000, workspace, codeIndex, semantic, tokenizer } = args
    const scope = await scopeOf(workspace, path, ctx.signal)
    const notes = await indexNotes(codeIndex, ctx)
    const terms = queryTerms(query).slice(0, MAX_QUERY_TERMS)
    const ranking = await semantic.search({ text: query, terms }, scope, DEPTH, ctx.signal)
    notes.push(...coverageNote(semantic, codeIndex, ranking))
    // A chunk outside a narrowed session is not shown.
    const hits: Hit[] = []
    for (const hit of ranking.hits) {
      const shown = shownPath(workspace, hit.path)
      if (shown !== undefined) hits.push({ ...hit, shown })
    }
    const page = paginate(hits, offset, pageSize, ranking.deeper)
    const termSet = new Set(terms)
    const snippets = await Promise.all(page.items.map(async hit => await snippetOf(workspace, hit, termSet, ctx)))
    const nextArgs = withoutDefaults({ ...args, offset: undefined }, SearchSemanticInput)
    const { text, pagination } = await fitPage(page.pagination, (kept, pagination, cut) => {
      const how = ranking.wordsOnly === undefined ? `by meaning (${semantic.status().model}) and by words, fused` : 'by words only (no vectors now)'
      const lines = [`# Code about "${query.slice(0, 200)}", best first — ${how}`, ...notes]
      if (hits.length === 0) lines.push(...pruneLines(['Nothing indexed comes close. search_regex searches every file as text; list_directory shows what is there.'], ctx.unserved))
      page.items.slice(0, kept).forEach((hit, i) => {
        const about = hit.similarity === undefined ? 'by words only' : `similarity ${hit.similarity.toFixed(2)}`
        lines.push(`${chunkHeading(hit)} (${about})`, ...snippets[i])
      })
      if (cut !== undefined) lines.push(cut)
      if (kept > 0) lines.push(...readWholeLine(page.items[0], ctx.unserved))
      lines.push(pagingFooter('search_semantic', pagination, nextArgs, 'Chunks'))
      return lines.join('\n')
    }, 'chunk', budget, tokenizer, ctx.signal)
    const result: ToolResult = {
      content: [{ type: 'text', text }],
      structuredContent: {
        results: page.items.slice(0, pagination.returned).map(h => ({
          ...chunkResult(h),
          score: Math.round(h.fused * 1e5) / 1e5,
          ...(h.similarity !== undefined ? { similarity: Math.round(h.similarity * 1000) / 1000 } : {})
        })),
        pagination
      }
    }
    return result
  }
})
