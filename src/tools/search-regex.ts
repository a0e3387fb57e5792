import { Type } from '@sinclair/typebox'
import { defineTool, Inject, textResult } from '../tool-api/define-tool.js'
import { MAX_RESPONSE_TOKENS, MIN_RESPONSE_TOKENS } from '../tool-kit/budget.js'
import type { HiddenMatches } from '../services/search/index.js'
import { formatCall, PaginationOutput, withoutDefaults, type Pagination } from '../tool-kit/paging.js'
import { fitSearch } from '../tool-kit/search-regex-fit.js'
import { counted } from '../tool-kit/format.js'
import { keptPagination, showLine, type RenderInput } from '../tool-kit/search-regex-render.js'

/** structuredContent of search_regex: locations, the matching lines as shown, and pagination; no context lines. */
export const SearchRegexOutput = Type.Object({
  mode: Type.String({ description: 'Output mode that was applied, e.g. "content"' }),
  path: Type.String({ description: 'Searched path relative to the workspace root, e.g. "src" ("." for the root)' }),
  matches: Type.Array(Type.Object({
    path: Type.String({ description: 'File path relative to the root, e.g. "src/app.ts"' }),
    line: Type.Integer({ description: '1-based line number of the matching line, e.g. 12' }),
    text: Type.Optional(Type.String({ description: 'The matching line as shown in the text (cut lines end with a marker; absent when the budget left counts only), e.g. "  return fetchUser(id)"' }))
  }, { description: 'One matching line, e.g. {"path":"src/app.ts","line":12,"text":"fetchUser(id)"}' }), { description: 'Matching lines shown on this page (content mode; empty otherwise); context lines are in the text only, e.g. [{"path":"src/app.ts","line":12,"text":"fetchUser(id)"}]' }),
  files: Type.Array(Type.Object({
    path: Type.String({ description: 'File path relative to the root, e.g. "src/app.ts"' }),
    count: Type.Optional(Type.Integer({ description: 'Matching lines in the file (count mode only; files mode does not count), e.g. 3' }))
  }, { description: 'One matching file, e.g. {"path":"src/app.ts","count":3}' }), { description: 'Files shown on this page (files/count modes; empty in content mode), e.g. [{"path":"src/app.ts","count":3}]' }),
  total_files: Type.Integer({ description: 'Files with at least one match in the whole result set, e.g. 7' }),
  pagination: PaginationOutput,
  notices: Type.Array(Type.String({ description: 'One notice, e.g. "search stopped after 15 s; results are partial"' }), { description: 'What was cut or skipped and how to get it, e.g. ["response budget: lines cut to 300 chars"]' }),
  truncated: Type.Boolean({ description: 'True when the token budget forced a shorter answer than requested, e.g. false' }),
  cached: Type.Boolean({ description: 'True when the page was sliced from a cached result set (no new scan), e.g. true' })
}, { description: 'Locations and pagination of a search_regex page' })

const OUTPUT_MODES = ['content', 'files', 'count'] as const
const GLOBS = { maxItems: 20 }

/** Arguments of search_regex (search and tokenizer are injected, never published). */
/** Default page sizes: matching lines with their context, or files at a line each. */
const CONTENT_PAGE = 10
const FILES_PAGE = 50

const SearchRegexInput = Type.Object({
  pattern: Type.String({ minLength: 1, maxLength: 1000, description: 'Regular expression in ripgrep (Rust regex) syntax, or a plain string with literal=true, e.g. "fetchUser\\\\(" or "getUser|fetchUser"' }),
  path: Type.Optional(Type.String({ description: 'File or folder to search, relative to the workspace root; default the whole workspace, e.g. "src/api"' })),
  literal: Type.Optional(Type.Boolean({ default: false, description: 'Treat pattern as a literal string (no regex metacharacters), e.g. true for "a.b(c)"' })),
  ignore_case: Type.Optional(Type.Boolean({ default: false, description: 'Match case-insensitively, e.g. true to find "Error" and "error"' })),
  include: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 500 }), { ...GLOBS, description: 'Only search files matching these globs (up to 20), e.g. ["*.ts", "src/**/*.tsx"]' })),
  exclude: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 500 }), { ...GLOBS, description: 'Skip files matching these globs (up to 20), e.g. ["**/*.test.ts", "vendor/**"]' })),
  context_lines: Type.Optional(Type.Integer({ minimum: 0, maximum: 10, default: 0, description: 'Lines of context before and after each match (0–10; content mode only), e.g. 2' })),
  output_mode: Type.Optional(Type.Union(OUTPUT_MODES.map(m => Type.Literal(m)), { default: 'content', description: 'What to return: matching lines ("content"), matching file paths ("files"), or per-file match counts ("count"), e.g. "files"' })),
  page_size: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, description: 'Results per page (1–100): matching lines in content mode (default 10), files in files and count modes (default 50: a line each), e.g. 20' })),
  offset: Type.Optional(Type.Integer({ minimum: 0, default: 0, description: 'Index of the first result to return, from the previous footer\'s next call, e.g. 10' })),
  respect_gitignore: Type.Optional(Type.Boolean({ default: true, description: 'Skip files that .gitignore/.ignore rules exclude; false searches them too, e.g. false in an unpacked tarball whose .gitignore hides the whole tree' })),
  max_response_tokens: Type.Optional(Type.Integer({ minimum: MIN_RESPONSE_TOKENS, maximum: MAX_RESPONSE_TOKENS, default: 8000, description: 'Token budget of the answer (1000–20000); over it, lines are shortened and results dropped, with a note, e.g. 4000' })),
  search: Inject('search'),
  tokenizer: Inject('tokenizer')
})

/** Says which matching files the ignore rules hid, which rule, and the exact call that includes them. */
function hiddenNotice (hidden: HiddenMatches, callArgs: Record<string, unknown>): string {
  const count = counted(`${hidden.files}${hidden.lowerBound ? '+' : ''}`, 'more matching file')
  // ripgrep and the explaining rules read the same ignore files, so a hidden file has a rule; a guard.
  /* c8 ignore next */
  const rule = hidden.rule === undefined ? '' : `, hidden by ${hidden.rule.where} ${JSON.stringify(hidden.rule.pattern)}`
  return `${count} excluded by ignore rules (e.g. ${hidden.example}${rule}) — to search them: ${formatCall('search_regex', { ...callArgs, respect_gitignore: false })}`
}

/** Regex (or literal) search of file contents through ripgrep, with deterministic pages and a token budget. */
export const searchRegex = defineTool({
  name: 'search_regex',
  title: 'Search File Contents',
  category: 'search',
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  description: 'Search file contents with a regular expression (or a literal string) and get matching lines grouped by file with line numbers.\n\n' +
    'Syntax is ripgrep\'s (Rust regex), not JavaScript: escape ( ) { } . with a backslash; look-around and backreferences are not supported (use context_lines or literal=true). ' +
    'Use find_files to match file names and read_files to read around a hit. .gitignore/.ignore rules apply, in a git repository or not (respect_gitignore=false searches ignored files too), and a near-empty answer says when those rules hid matching files; hidden files are searched only when `path` names them; files over 10 MB are skipped unless named in `path`. ' +
    'Results are sorted by path and line; the footer gives the exact call for the next page (served from a 60 s cache). Long answers are shortened to max_response_tokens, never refused.',
  input: SearchRegexInput,
  output: SearchRegexOutput,
  timeoutHint: 'search a smaller path, add include globs or make the pattern more specific (a smaller page_size does not shorten the scan), then call again',
  examples: [
    { comment: 'Find where a function is called in the TypeScript sources', arguments: { pattern: 'fetchUser\\(', path: 'src', include: ['*.ts'] } },
    { comment: 'List the files that mention deprecated or legacy code, ignoring case', arguments: { pattern: 'deprecated|legacy', ignore_case: true, output_mode: 'files' } },
    { comment: 'A literal string with two lines of context, second page', arguments: { pattern: 'config.get(', literal: true, context_lines: 2, offset: 10 } }
  ],
  async run (args, { signal, unserved }) {
    const { search, tokenizer, pattern } = args
    const literal = args.literal ?? false
    const mode = args.output_mode ?? 'content'
    const offset = args.offset ?? 0
    const defaultPage = mode === 'content' ? CONTENT_PAGE : FILES_PAGE
    const pageSize = args.page_size ?? defaultPage
    const budget = args.max_response_tokens ?? 8000
    const contextLines = mode === 'content' ? args.context_lines ?? 0 : 0
    const page = await search.search({
      pattern,
      literal,
      ignoreCase: args.ignore_case ?? false,
      path: args.path,
      include: args.include,
      exclude: args.exclude,
      contextLines,
      mode,
      respectGitignore: args.respect_gitignore ?? true
    }, { offset, pageSize, signal })

    const notices: string[] = []
    if (mode !== 'content' && (args.context_lines ?? 0) > 0) notices.push(`context_lines ignored in output_mode=${mode}`)
    const callArgs: Record<string, unknown> = withoutDefaults({
      pattern,
      path: args.path,
      literal: args.literal,
      ignore_case: args.ignore_case,
      include: args.include,
      exclude: args.exclude,
      context_lines: args.context_lines,
      output_mode: args.output_mode,
      // The mode's own default is left out of the calls a footer gives, as the schema's defaults are.
      page_size: args.page_size === defaultPage ? undefined : args.page_size,
      respect_gitignore: args.respect_gitignore,
      max_response_tokens: args.max_response_tokens
    }, SearchRegexInput)
    if (page.hidden !== undefined) notices.push(hiddenNotice(page.hidden, callArgs))
    const input: RenderInput = { page, pattern, literal, offset, pageSize, callArgs, notices, unserved }
    const items = mode === 'content' ? page.content.length : page.files.length
    const fitted = await fitSearch(input, items, contextLines, budget, tokenizer, signal)
    const { level } = fitted
    const kept = Math.min(level.keep, items)
    const pagination: Pagination = keptPagination(page, offset, pageSize, kept)
    const result = textResult(fitted.text, {
      mode,
      path: page.path,
      matches: page.content.slice(0, kept).map(m => level.countsOnly ? { path: m.path, line: m.hit.line } : { path: m.path, line: m.hit.line, text: showLine(m.hit, level.maxLine) }),
      // files mode does not count lines: the count is left out rather than faked.
      files: page.files.slice(0, kept).map(f => mode === 'count' ? { path: f.path, count: f.count } : { path: f.path }),
      total_files: page.fileCount,
      pagination,
      notices: [...page.notices, ...notices, ...(fitted.note === undefined ? [] : [fitted.note])],
      truncated: fitted.note !== undefined,
      cached: page.cached
    })
    return { ...result, partial: page.totalIsLowerBound }
  }
})
