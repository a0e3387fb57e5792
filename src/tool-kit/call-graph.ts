import type { CodeIndex, OutlineRow, PathScope } from '../services/code-index/index.js'
import { compareText } from './paging.js'
import { attribute, attributor, type Via } from './reference-attribution.js'
import { containerOf } from './reference-page.js'
import type { Definition, ReferenceSource, Site } from './reference-source.js'

/** A function (or any definition) of the graph, or the top of a file whose code makes a call outside any definition. */
export interface GraphNode {
  /** `path:line` of its definition, `path` for a file's top level, `?name` for a callee with no single definition. */
  id: string
  name: string
  kind: string
  /** As the session shows it; absent for a callee that is not resolved. */
  path?: string
  line?: number
  endLine?: number
  /** How many calls away from the function asked about (0: itself). */
  depth: number
}

/** Where a call is made. */
export interface CallSite { path: string, line: number, column: number }

/**
 * A call from one node to another: `resolved` to one definition (and how: its file, an import, or by name — the
 * only definition there is), `ambiguous` between several, `unresolved` when no definition of the name is
 * indexed. Never guessed: an edge that is not resolved says so, with its candidates.
 */
export interface GraphEdge {
  from: string
  to: string
  status: 'resolved' | 'ambiguous' | 'unresolved'
  via?: Via
  /** Its first call sites, in source order, and how many there are. */
  sites: CallSite[]
  calls: number
  /** The definitions an ambiguous call could mean, as path:line. */
  candidates?: string[]
}

/** The graph around one function, to a depth, with what was left out. */
export interface CallGraph {
  root: GraphNode
  nodes: Map<string, GraphNode>
  callers: GraphEdge[]
  callees: GraphEdge[]
  /** Past the caps: by node, how many call sites (callers) or names (callees) were left out. */
  cut: Array<{ node: string, direction: 'callers' | 'callees', left: number }>
  /** Nodes not followed further once the graph held MAX_NODES. */
  unfollowed: number
}

/** Call sites kept per edge. */
export const SITES_PER_EDGE = 5
/** Callers read per function (their call sites, in path order); more are counted, not followed. */
export const MAX_CALLER_SITES = 200
/** Distinct callees followed per function. */
export const MAX_CALLEES = 100
/** Nodes a graph holds at most; deeper ones past it are counted, not followed. */
export const MAX_NODES = 500

interface Known { definition: Definition, node: GraphNode }

/** The node of a definition; a name with no definition indexed (its path empty) is an unresolved node. */
export const nodeOf = (d: Definition, depth: number): GraphNode => d.path === ''
  ? { id: `?${d.name}`, name: d.name, kind: 'unresolved', depth }
  : { id: `${d.shown}:${d.line}`, name: d.name, kind: d.kind, path: d.shown, line: d.line, endLine: d.endLine, depth }

/** The node of the definition a call site lies in (or of its file's top level). */
function callerNode (outline: readonly OutlineRow[], file: { path: string, shown: string }, line: number, depth: number): { node: GraphNode, definition?: Definition } {
  const row = containerOf(outline, line)
  if (row === undefined) return { node: { id: file.shown, name: `(top level of ${file.shown})`, kind: 'file', path: file.shown, depth } }
  const definition: Definition = { path: file.path, shown: file.shown, name: row.name, kind: row.kind, container: row.container, line: row.line, endLine: row.endLine, signature: '' }
  return { node: nodeOf(definition, depth), definition }
}

/**
 * Builds the call graph of `root` (one of its name's definitions): its callers and/or callees to `depth` (1–3), from
 * the code index's call references. Callers are the definitions whose lines hold a call of the name in a file tied
 * to this definition (as find_references ties them) — or tied by the name only, then `ambiguous` when the name has
 * other definitions; callees are the names called on its lines, each resolved against its definitions from the
 * calling file.
 */
export function buildCallGraph (index: CodeIndex, source: ReferenceSource, root: Definition, options: { depth: number, callers: boolean, callees: boolean, scope: PathScope }): CallGraph {
  const graph: CallGraph = { root: nodeOf(root, 0), nodes: new Map(), callers: [], callees: [], cut: [], unfollowed: 0 }
  graph.nodes.set(graph.root.id, graph.root)
  const definitionsOf = new Map<string, Definition[]>()
  const definitions = (name: string): Definition[] => {
    let found = definitionsOf.get(name)
    if (found === undefined) definitionsOf.set(name, found = source.definitions(name))
    return found
  }
  const add = (node: GraphNode): GraphNode => {
    const known = graph.nodes.get(node.id)
    if (known !== undefined) return known
    graph.nodes.set(node.id, node)
    return node
  }

  function callersOf (target: Known): Known[] {
    const all = definitions(target.definition.name)
    // -1 for a name with no definition indexed: every call of the name is then a caller, unresolved.
    const meant = all.findIndex(d => d.path === target.definition.path && d.line === target.definition.line)
    const files = source.files(target.definition.name, options.scope).filter(f => (f.counts.call ?? 0) > 0).sort((a, b) => compareText(a.shown, b.shown))
    const imports = all.length > 1 ? source.imports(files.map(f => f.id)) : new Map<number, string[]>()
    const kept: Array<{ file: typeof files[number], via: Via, ambiguous: boolean }> = []
    const tieCaller = attributor(all)
    for (const file of files) {
      // Every file that calls the name has its row of imports (empty when it has none).
      const tie = all.length > 1 ? tieCaller(file.path, imports.get(file.id) as string[]) : { meant: all.length === 1 ? [0] : [-1], via: 'name' as Via }
      if (!tie.meant.includes(meant)) continue
      kept.push({ file, via: tie.via, ambiguous: tie.meant.length > 1 })
    }
    // Call sites in path order, up to the cap; the rest are counted.
    let taken = 0
    const reading: typeof kept = []
    for (const k of kept) {
      if (taken >= MAX_CALLER_SITES) break
      reading.push(k)
      taken += k.file.counts.call as number
    }
    const left = kept.slice(reading.length).reduce((sum, k) => sum + (k.file.counts.call as number), 0)
    if (left > 0) graph.cut.push({ node: target.node.id, direction: 'callers', left })
    const ids = reading.map(k => k.file.id)
    const sites = source.sites(target.definition.name, ids)
    const outlines = source.outlines(ids)
    const next: Known[] = []
    const edges = new Map<string, GraphEdge>()
    for (const { file, via, ambiguous } of reading) {
      for (const site of (sites.get(file.id) as Site[]).filter(s => s.kind === 'call')) {
        const { node, definition } = callerNode(outlines.get(file.id) ?? [], file, site.line, target.node.depth + 1)
        const caller = add(node)
        let edge = edges.get(caller.id)
        if (edge === undefined) {
          edge = { from: caller.id, to: target.node.id, status: meant === -1 ? 'unresolved' : ambiguous ? 'ambiguous' : 'resolved', via, sites: [], calls: 0, ...(ambiguous ? { candidates: all.map(d => `${d.shown}:${d.line}`) } : {}) }
          edges.set(caller.id, edge)
          if (definition !== undefined && caller === node) next.push({ definition, node: caller })
        }
        edge.calls++
        if (edge.sites.length < SITES_PER_EDGE) edge.sites.push({ path: file.shown, line: site.line, column: site.column })
      }
    }
    graph.callers.push(...edges.values())
    return next
  }

  function calleesOf (target: Known): Known[] {
    // A definition the index gave has its file there, and that file's row of imports.
    const file = index.references.fileIds([target.definition.path]).get(target.definition.path) as number
    const calls = index.references.calls(file, target.definition.line, target.definition.endLine)
    const imports = index.references.imports([file]).get(file) as string[]
    const byName = new Map<string, typeof calls>()
    for (const call of calls) byName.set(call.name, [...(byName.get(call.name) ?? []), call])
    const names = [...byName.keys()]
    if (names.length > MAX_CALLEES) graph.cut.push({ node: target.node.id, direction: 'callees', left: names.length - MAX_CALLEES })
    const next: Known[] = []
    for (const name of names.slice(0, MAX_CALLEES)) {
      const all = definitions(name)
      const made = byName.get(name) as typeof calls
      const sites = made.slice(0, SITES_PER_EDGE).map(c => ({ path: target.node.path as string, line: c.line, column: c.column }))
      if (all.length === 0) {
        graph.callees.push({ from: target.node.id, to: add({ id: `?${name}`, name, kind: 'unresolved', depth: target.node.depth + 1 }).id, status: 'unresolved', sites, calls: made.length })
        continue
      }
      const tie = all.length > 1 ? attribute(target.definition.path, imports, all) : { meant: [0], via: 'name' as Via }
      if (tie.meant.length > 1) {
        graph.callees.push({ from: target.node.id, to: add({ id: `?${name}`, name, kind: 'ambiguous', depth: target.node.depth + 1 }).id, status: 'ambiguous', via: tie.via, sites, calls: made.length, candidates: tie.meant.map(i => `${all[i].shown}:${all[i].line}`) })
        continue
      }
      const definition = all[tie.meant[0]]
      const node = nodeOf(definition, target.node.depth + 1)
      const callee = add(node)
      graph.callees.push({ from: target.node.id, to: callee.id, status: 'resolved', via: tie.via, sites, calls: made.length })
      if (callee === node) next.push({ definition, node: callee })
    }
    return next
  }

  const walk = (step: (target: Known) => Known[]): void => {
    let level: Known[] = [{ definition: root, node: graph.root }]
    for (let d = 1; d <= options.depth && level.length > 0; d++) {
      const after: Known[] = []
      for (const target of level) {
        if (graph.nodes.size >= MAX_NODES) {
          graph.unfollowed++
          continue
        }
        after.push(...step(target))
      }
      level = after
    }
  }
  if (options.callers) walk(callersOf)
  if (options.callees) walk(calleesOf)
  return graph
}
