/** One published tool as the guide sees it: wire schema plus documentation. */
export interface CatalogEntry {
  name: string
  title: string
  category: string
  description: string
  inputSchema: Record<string, unknown>
  outputSchema?: Record<string, unknown>
  annotations: Record<string, unknown>
  /** How the tool runs as an MCP task, if it may. */
  task?: { support: 'optional' | 'required', afterMs?: number }
  /** Examples declared on the tool definition itself (the YAML overlay may add more). */
  examples: Array<{ comment: string, arguments: Record<string, unknown> }>
  /** Validates arguments against the tool's input schema; returns error lines (empty when valid). */
  validate(args: unknown): string[]
}

/** Read-only view of the live registry, injected into the guide tools (filled in by the registry). */
export interface ToolCatalog {
  /** Every listed tool, in registration order. */
  entries(): CatalogEntry[]
  /** The exact `tools/list` JSON text (all pages concatenated into one array). */
  manifestJson(): string
  /** Tools that are defined but not listed here because a service they need is not configured (git_log without git). */
  unlisted(): string[]
}
