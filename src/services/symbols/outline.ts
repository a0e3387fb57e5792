import type { SymbolKind } from './languages.js'
import type { RawDefinition } from './parser.js'

/** One symbol of a file's outline; lines are 1-based and inclusive, as read_files takes them. */
export interface OutlineSymbol {
  kind: SymbolKind
  name: string
  /** The enclosing symbol's name (or a Go method's receiver type). */
  container?: string
  line: number
  endLine: number
  /** 1 for a top-level symbol, 2 for a member of one … */
  depth: number
  /** The definition's head: its first line through the line of its name, whitespace collapsed. */
  signature: string
}

/** Longest signature kept, in characters. */
export const MAX_SIGNATURE_CHARS = 200

/** A function directly inside one of these is a method. */
const MEMBER_OWNERS = new Set(['class', 'interface', 'trait', 'struct', 'union', 'enum', 'impl'])

function signatureOf (lines: readonly string[], from: number, to: number): string {
  const text = lines.slice(from, Math.min(to, from + 7) + 1).join(' ').replace(/\s+/g, ' ').replace(/\s*\{$/, '').trim()
  if (text.length <= MAX_SIGNATURE_CHARS) return text
  const code = text.charCodeAt(MAX_SIGNATURE_CHARS - 1)
  return `${text.slice(0, code >= 0xd800 && code <= 0xdbff ? MAX_SIGNATURE_CHARS - 1 : MAX_SIGNATURE_CHARS)}…`
}

/**
 * Turns the query's definitions into an outline in source order: one symbol per definition node (a node two
 * patterns name is not a constant when the other says more: `const f = () => …` is a function), nested by
 * containment.
 */
export function buildOutline (definitions: readonly RawDefinition[], lines: readonly string[]): OutlineSymbol[] {
  const byNode = new Map<string, RawDefinition>()
  for (const d of definitions) {
    const key = `${d.from}:${d.to}`
    const known = byNode.get(key)
    if (known === undefined || known.kind === 'constant') byNode.set(key, d)
  }
  const unique = [...byNode.values()].sort((a, b) => a.from - b.from || b.to - a.to)
  const symbols: OutlineSymbol[] = []
  const open: Array<{ to: number, symbol: OutlineSymbol }> = []
  for (const d of unique) {
    while (open.length > 0 && open[open.length - 1].to <= d.from) open.pop()
    const parent = open.at(-1)?.symbol
    const kind = (d.kind === 'function' && parent !== undefined && MEMBER_OWNERS.has(parent.kind) ? 'method' : d.kind) as SymbolKind
    // A node that ends at column 0 ends with the line break before it: its last line is the one above.
    const end = d.endColumn === 0 && d.end > d.start ? d.end - 1 : d.end
    const symbol: OutlineSymbol = { kind, name: d.name, line: d.start + 1, endLine: end + 1, depth: open.length + 1, signature: signatureOf(lines, d.start, d.nameRow) }
    const container = d.container ?? parent?.name
    if (container !== undefined) symbol.container = container
    symbols.push(symbol)
    open.push({ to: d.to, symbol })
  }
  return symbols
}
