import type { Logger } from '../base/logger.js'
import type { CatalogEntry, ToolCatalog } from '../services/catalog.js'
import { resolveDocs, type ResolvedDocs } from './docs.js'
import { createOverlaySource, type Overlay, type OverlaySource } from './overlay.js'
import { renderIndex, renderSections } from './render.js'

/** Largest guide returned in one piece (bytes of UTF-8). */
export const GUIDE_MAX_BYTES = 50 * 1024

/** What a caller may ask the guide for (the get_tool_usage_guide arguments). */
export interface GuideRequest {
  /** Only these tools; unknown names become warnings. */
  tool_names?: string[]
  /** Only this category. */
  category?: string
  /** Show worked examples (default true). */
  include_examples?: boolean
}

/** Facts about one rendering, returned as structuredContent by the tool. */
export interface GuideMetadata {
  total_tools: number
  filtered_count: number
  invalid_names: string[]
  generation_time_ms: number
}

/** The rendered guide plus its warnings and metadata. */
export interface GuideOutput {
  text: string
  warnings: string[]
  metadata: GuideMetadata
  /** True when the full guide was over GUIDE_MAX_BYTES and an index was returned instead. */
  truncated: boolean
}

/** The usage guide service: one renderer behind the tool, the help resources and the CLI. */
export interface UsageGuide {
  /** Renders the guide for a request; `now` (ms since epoch) stamps the header. */
  render(catalog: ToolCatalog, request?: GuideRequest, now?: number): GuideOutput
  /** The overlay resolved against the registry (states, validated examples, problems). */
  docs(catalog: ToolCatalog): ResolvedDocs
  /** The overlay snapshot currently in use. */
  overlay(): Overlay
}

declare module '../services/index.js' {
  interface Services {
    /** The usage-guide renderer over the YAML overlay (added by createRuntime when absent). */
    guide?: UsageGuide
  }
}

/** Options for createUsageGuide. */
export interface UsageGuideOptions {
  /** Absolute path of the YAML overlay (`docs/tools.yaml` by default). */
  docsFile: string
  /** The served root: an overlay inside it is read through the jail. */
  root?: string
  /** Overlay warnings and example problems are logged here once per overlay version. */
  log?: Logger
  /** Alternative overlay source (tests). */
  overlay?: OverlaySource
}

const CACHE_LIMIT = 64

function filterLabel (request: GuideRequest): string {
  const parts: string[] = []
  if (request.category !== undefined) parts.push(`category=${request.category}`)
  if (request.tool_names !== undefined && request.tool_names.length > 0) parts.push(`tool_names=${request.tool_names.join(',')}`)
  if (request.include_examples === false) parts.push('include_examples=false')
  return parts.length === 0 ? 'none' : parts.join(' ')
}

/** Creates the usage guide over an overlay file; renders are cached per overlay version and registry. */
export function createUsageGuide (options: UsageGuideOptions): UsageGuide {
  const source = options.overlay ?? createOverlaySource({ file: options.docsFile, root: options.root, log: options.log })
  const registryIds = new WeakMap<CatalogEntry[], number>()
  let nextRegistryId = 0
  let resolved: { key: string, docs: ResolvedDocs } | undefined
  const bodies = new Map<string, { body: string, truncated: boolean }>()

  function registryId (entries: CatalogEntry[]): number {
    let id = registryIds.get(entries)
    if (id === undefined) registryIds.set(entries, id = ++nextRegistryId)
    return id
  }

  function docs (catalog: ToolCatalog): ResolvedDocs {
    const entries = catalog.entries()
    const overlay = source.current()
    const key = `${overlay.version}|${registryId(entries)}`
    if (resolved?.key !== key) {
      resolved = { key, docs: resolveDocs(entries, overlay, catalog.unlisted()) }
      for (const problem of resolved.docs.problems) options.log?.error({ tool: problem.tool, file: overlay.file }, `tool docs: ${problem.message}`)
    }
    return resolved.docs
  }

  function body (entries: CatalogEntry[], selected: CatalogEntry[], resolvedDocs: ResolvedDocs, request: GuideRequest): { body: string, truncated: boolean } {
    const includeExamples = request.include_examples !== false
    const full = renderSections(selected, resolvedDocs.tools, { includeExamples })
    if (Buffer.byteLength(full) <= GUIDE_MAX_BYTES - 1024) return { body: full, truncated: false }
    const kb = Math.ceil(Buffer.byteLength(full) / 1024)
    const categories = [...new Set(entries.map(e => e.category))].join(', ')
    const note = `**The full guide is ${kb} KB, over the ${GUIDE_MAX_BYTES / 1024} KB limit.** ` +
      `Call again with \`category\` (one of ${categories}) or \`tool_names\` (a few names from the index below)` +
      (includeExamples ? ', or with `include_examples: false`.' : '.')
    return { body: `${note}\n\n## Index (${selected.length} tools)\n\n${renderIndex(selected)}`, truncated: true }
  }

  return {
    docs,
    overlay: () => source.current(),
    render (catalog, request = {}, now = Date.now()) {
      const started = performance.now()
      const entries = catalog.entries()
      const resolvedDocs = docs(catalog)
      const names = new Set(entries.map(e => e.name))
      const wanted = request.tool_names ?? []
      const invalid = [...new Set(wanted.filter(n => !names.has(n)))]
      const warnings = invalid.map(n => `Tool '${n}' not found. Available: ${[...names].join(', ')}`)
      const selected = entries.filter(e =>
        (wanted.length === 0 || wanted.includes(e.name)) &&
        (request.category === undefined || e.category === request.category))

      const key = `${resolved?.key}|${selected.map(e => e.name).join(',')}|${request.include_examples !== false}`
      let cached = bodies.get(key)
      if (cached === undefined) {
        cached = body(entries, selected, resolvedDocs, request)
        if (bodies.size >= CACHE_LIMIT) bodies.delete(bodies.keys().next().value as string)
        bodies.set(key, cached)
      }
      const header = `# Tool usage guide\n\nGenerated ${new Date(now).toISOString()} · ${selected.length} of ${entries.length} tools · filter: ${filterLabel(request)}`
      const parts = [header]
      if (warnings.length > 0) parts.push(warnings.map(w => `> Warning: ${w}`).join('\n'))
      parts.push(selected.length === 0 ? '_No tools match this filter._' : cached.body)
      const text = parts.join('\n\n') + '\n'
      return {
        text,
        warnings,
        truncated: cached.truncated,
        metadata: {
          total_tools: entries.length,
          filtered_count: selected.length,
          invalid_names: invalid,
          generation_time_ms: Math.round((performance.now() - started) * 1000) / 1000
        }
      }
    }
  }
}
