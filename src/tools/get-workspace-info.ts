import { Type } from '@sinclair/typebox'
import { defineTool, Inject, textResult } from '../tool-api/define-tool.js'
import { pruneMentions } from '../services/prune-mentions.js'
import { MAX_RESPONSE_TOKENS, MIN_RESPONSE_TOKENS } from '../tool-kit/budget.js'
import { clockTime, counted } from '../tool-kit/format.js'
import { problemText, storeWords, type CodeIndexStatus, type SemanticStatus } from '../services/code-index/index.js'
import { problemHint } from '../tool-kit/code-index-common.js'

/** The index's state in words: what an agent can expect of find_symbol and search_code now. */
function indexState (status: CodeIndexStatus): string {
  switch (status.state) {
    case 'building': return status.pending === 0 ? 'being built: walking the tree' : `being built: ${status.done} of ${counted(status.pending, 'changed file')} done so far`
    case 'failed': return `failed (${storeWords(status.error ?? 'unknown error')})`
    case 'unavailable': return status.problem === undefined ? 'unavailable' : `unavailable: ${problemText(status.problem)}. ${problemHint(status.problem)}`
    case 'ready': return status.error !== undefined ? `ready, but the last rescan failed (${storeWords(status.error)})` : status.scanning ? 'ready (a rescan runs behind it)' : 'ready'
  }
}

/** The index section of the text: what is indexed, how old it is, and how far a running scan is. */
function indexLines (status: CodeIndexStatus): string[] {
  const held = `${counted(status.files, 'source file')}, ${counted(status.chunks, 'chunk')}, ${counted(status.symbols, 'symbol')}`
  const when = status.lastScan === undefined ? '' : `; last scan ${new Date(status.lastScan).toISOString()}${status.lastScanMs === undefined ? '' : ` (${(status.lastScanMs / 1000).toFixed(1)} s)`}`
  const built = status.built === undefined || status.lastScan !== undefined ? '' : `; complete as of ${new Date(status.built).toISOString()}`
  return [
    '',
    '## Code index (find_symbol, search_code)',
    `- ${indexState(status)}; ${held}${when}${built}`,
    ...(status.writer === undefined ? [] : [`- written by another server (${status.writer}); this one answers from what it writes`]),
    '- a call finding the last scan older than 30 s starts a size+mtime rescan; changed files are re-indexed'
  ]
}

/** The semantic-search line of the text. */
function semanticLine (status: SemanticStatus | undefined, chunks: number): string {
  if (status === undefined) return '- semantic search: not configured (search_code ranks code by its words)'
  const state = status.state === 'failed'
    ? `embedding failed: ${status.error ?? 'unknown error'}${status.retryAt === undefined ? '' : ` (the server asks the provider again at ${clockTime(status.retryAt)})`}`
    : status.state === 'embedding' ? 'embedding in the background' : status.state === 'waiting' ? 'waiting for the code index' : status.capped ? 'stopped at --embeddings-max-chunks' : 'up to date'
  return `- semantic search (search_semantic): model ${status.model}${status.dims === undefined ? '' : `, ${status.dims} dimensions`}; ${status.vectors} of ${counted(chunks, 'chunk')} have vectors; ${state}`
}

/** structuredContent of get_workspace_info. */
export const GetWorkspaceInfoOutput = Type.Object({
  roots: Type.Array(Type.Object({
    name: Type.String({ description: 'Display name of the root (its folder name, never an absolute path), e.g. "my-app"' }),
    path: Type.String({ description: 'How paths in this root start: "." when it is the only root, else its name and a colon, e.g. "docs:"' })
  }, { description: 'One workspace root, e.g. {"name":"my-app","path":"."}' }), { description: 'Workspace roots served, the default one first, e.g. [{"name":"my-app","path":"."}]' }),
  ripgrep: Type.Optional(Type.Object({
    version: Type.String({ description: 'ripgrep version used for search_regex, e.g. "15.0.0"' }),
    source: Type.String({ description: 'Where the binary comes from, e.g. "@vscode/ripgrep"' }),
    pcre2_available: Type.Boolean({ description: 'Whether the binary was built with PCRE2, e.g. true' }),
    pcre2_enabled: Type.Boolean({ description: 'Whether search_regex uses PCRE2 (look-around, backreferences); always false: linear-time engine only, e.g. false' })
  }, { description: 'The search engine (absent when ripgrep cannot run here), e.g. {"version":"15.0.0","pcre2_enabled":false}' })),
  limits: Type.Object({
    search_timeout_ms: Type.Optional(Type.Integer({ description: 'Wall-clock limit of one search before partial results are returned (with ripgrep), e.g. 15000' })),
    search_max_file_size: Type.Optional(Type.String({ description: 'Largest file searched while walking a folder (with ripgrep), e.g. "10M"' })),
    search_cache_ttl_ms: Type.Optional(Type.Integer({ description: 'How long a search result set stays cached for its next pages (with ripgrep), e.g. 60000' })),
    max_line_chars: Type.Integer({ description: 'Longer lines are cut with a marker, e.g. 2000' }),
    min_response_tokens: Type.Integer({ description: 'Smallest max_response_tokens accepted, e.g. 1000' }),
    max_response_tokens: Type.Integer({ description: 'Largest max_response_tokens accepted, e.g. 20000' })
  }, { description: 'Limits in force, e.g. {"search_timeout_ms":15000}' }),
  code_index: Type.Optional(Type.Object({
    state: Type.String({ description: '"building" until an index is complete, then "ready"; "failed", or "unavailable" when its store cannot be written, e.g. "ready"' }),
    files: Type.Integer({ description: 'Source files indexed, e.g. 340' }),
    chunks: Type.Integer({ description: 'Code chunks search_code ranks, e.g. 1061' }),
    symbols: Type.Integer({ description: 'Definitions find_symbol finds, e.g. 2657' }),
    pending: Type.Integer({ description: 'Files the running or last scan found new or changed, e.g. 3' }),
    done: Type.Integer({ description: 'How many of those are indexed, e.g. 3' }),
    last_scan: Type.Optional(Type.String({ description: 'When the last scan finished, ISO 8601, e.g. "2026-11-26T03:00:00.000Z"' })),
    complete_as_of: Type.Optional(Type.String({ description: 'When the index on disk was last complete (its age), ISO 8601, e.g. "2026-11-26T02:00:00.000Z"' })),
    problem: Type.Optional(Type.String({ description: 'Why it is unavailable and what to do, e.g. "the code index cannot be written: the disk of the state folder (--state-dir) is full (…)"' }))
  }, { description: 'The symbol and code-search index (absent when it is off), e.g. {"state":"ready","files":340}' })),
  embeddings: Type.Optional(Type.Object({
    state: Type.String({ description: '"waiting" for the index, "embedding", "ready" or "failed", e.g. "embedding"' }),
    model: Type.String({ description: 'Embedding model, e.g. "nomic-embed-text"' }),
    dimensions: Type.Optional(Type.Integer({ description: 'Vector length, e.g. 768' })),
    vectors: Type.Integer({ description: 'Chunks that have a vector, e.g. 1061' }),
    error: Type.Optional(Type.String({ description: 'Why embedding stopped, e.g. "… answered HTTP 401: invalid key"' }))
  }, { description: 'Vectors behind search_semantic (absent without a provider), e.g. {"state":"ready","vectors":1061}' })),
  capabilities: Type.Object({
    gitignore: Type.Boolean({ description: 'Whether .gitignore and .ignore rules are honoured, e.g. true' }),
    hidden_files: Type.String({ description: 'How hidden files are treated, e.g. "opt-in"' }),
    symlinks: Type.String({ description: 'How symbolic links are treated, e.g. "never followed out of the workspace"' }),
    tokenizer: Type.String({ description: 'BPE encoding used to measure answers, e.g. "cl100k_base"' }),
    semantic_search: Type.Boolean({ description: 'Whether search by meaning is available, e.g. false' }),
    tools: Type.Array(Type.String({ description: 'A tool name, e.g. "search_regex"' }), { description: 'Tools this server lists, e.g. ["list_directory","search_regex"]' })
  }, { description: 'What works here, e.g. {"gitignore":true,"semantic_search":false}' })
}, { description: 'Roots, limits, engine and capabilities of this workspace server' })

/** Roots, limits in force, ripgrep version and capabilities, in one call. */
export const getWorkspaceInfo = defineTool({
  name: 'get_workspace_info',
  title: 'Workspace Info',
  category: 'guide',
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  description: 'Get the workspace root, the limits in force, the search engine version and what this server can do, in one call with no arguments.\n\n' +
    'Use it first when unsure what paths, budgets or regex features are available; list_directory shows the files themselves and get_tool_usage_guide documents each tool.',
  input: Type.Object({
    workspace: Inject('workspace'),
    search: Type.Optional(Inject('search')),
    tokenizer: Inject('tokenizer'),
    catalog: Inject('catalog'),
    codeIndex: Type.Optional(Inject('codeIndex')),
    semantic: Type.Optional(Inject('semantic'))
  }),
  output: GetWorkspaceInfoOutput,
  examples: [
    { comment: 'Check roots, limits and regex support before searching', arguments: {} },
    { comment: 'The call takes no arguments; an empty object is all it needs', arguments: {} }
  ],
  async run ({ workspace, search, tokenizer, catalog, codeIndex, semantic }, { unserved }) {
    // Absolute roots are never shown: only their names.
    const several = workspace.roots.length > 1
    const roots = workspace.roots.map(r => ({ name: r.name, path: several ? `${r.name}:` : '.' }))
    // Without ripgrep this is still the call that says what works here: the search lines say it is missing.
    const limits = search?.limits
    const engine = await search?.engine()
    const tools = catalog.entries().map(e => e.name)
    const index = codeIndex?.status()
    const vectors = semantic?.status()
    const info = {
      roots,
      ...(engine === undefined ? {} : { ripgrep: { version: engine.version, source: engine.source, pcre2_available: engine.pcre2Available, pcre2_enabled: false } }),
      limits: {
        ...(limits === undefined ? {} : { search_timeout_ms: limits.timeoutMs, search_max_file_size: limits.maxFileSize, search_cache_ttl_ms: limits.cacheTtlMs }),
        max_line_chars: 2000,
        min_response_tokens: MIN_RESPONSE_TOKENS,
        max_response_tokens: MAX_RESPONSE_TOKENS
      },
      ...(index === undefined
        ? {}
        : {
            code_index: {
              state: index.state,
              files: index.files,
              chunks: index.chunks,
              symbols: index.symbols,
              pending: index.pending,
              done: index.done,
              ...(index.lastScan === undefined ? {} : { last_scan: new Date(index.lastScan).toISOString() }),
              ...(index.built === undefined ? {} : { complete_as_of: new Date(index.built).toISOString() }),
              ...(index.problem === undefined ? {} : { problem: `${problemText(index.problem)}. ${problemHint(index.problem)}` })
            }
          }),
      ...(vectors === undefined
        ? {}
        : { embeddings: { state: vectors.state, model: vectors.model, ...(vectors.dims === undefined ? {} : { dimensions: vectors.dims }), vectors: vectors.vectors, ...(vectors.error === undefined ? {} : { error: vectors.error }) } }),
      capabilities: {
        gitignore: true,
        hidden_files: 'opt-in',
        symlinks: 'never followed out of the workspace',
        tokenizer: tokenizer.encoding,
        semantic_search: semantic !== undefined,
        tools
      }
    }
    const text = [
      '# Workspace',
      '',
      several
        ? `Roots: ${roots.map(r => `\`${r.path}\``).join(', ')} — a path starts with its root (e.g. "${roots[1].path}README.md"); without one it is in \`${roots[0].name}\`. "." is every root: list_directory, find_files and search_regex cover them all unless a path narrows them.`
        : `Root: \`${roots[0].name}\` — every path is relative to it (e.g. "src/app.ts"); "." is the root.`,
      '',
      '## Search engine',
      ...(engine === undefined || limits === undefined
        ? ['- none: ripgrep cannot run here, so search_regex is not served; find_files finds files by name and read_files reads them']
        : [
            `- ripgrep ${engine.version} (${engine.source}); regex syntax is Rust's (linear time): no look-around or backreferences${engine.pcre2Available ? ' (PCRE2 is built in but not enabled)' : ''}`,
            `- a search stops after ${limits.timeoutMs / 1000} s with partial results; files over ${limits.maxFileSize}B are skipped unless named in \`path\``,
            `- result sets are cached ${limits.cacheTtlMs / 1000} s, so the next page is a slice, not a new scan`
          ]),
      '',
      '## Limits',
      `- answers are measured with a real BPE tokenizer (${tokenizer.encoding}); max_response_tokens ${MIN_RESPONSE_TOKENS}–${MAX_RESPONSE_TOKENS}; over budget, answers are shortened with a note, never refused`,
      '- lines longer than 2,000 characters are cut with a marker',
      ...(index === undefined ? [] : indexLines(index)),
      '',
      '## Capabilities',
      '- .gitignore and .ignore rules are honoured; hidden files are opt-in (name them in `path`)',
      '- symbolic links are never followed out of the workspace',
      semanticLine(vectors, index?.chunks ?? 0),
      `- tools: ${tools.join(', ')}`
    ].join('\n')
    return textResult(pruneMentions(text, unserved), info)
  }
})
