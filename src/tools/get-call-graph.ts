import { Type } from '@sinclair/typebox'
import { toolError } from '../base/errors.js'
import { nameToken } from '../services/symbols/index.js'
import { fitLadder, fitLargest, MAX_RESPONSE_TOKENS, MIN_RESPONSE_TOKENS, type Rung } from '../tool-kit/budget.js'
import { buildCallGraph, type CallGraph, type GraphEdge, type GraphNode } from '../tool-kit/call-graph.js'
import { indexNotes, INDEX_TASK, scopeOf } from '../tool-kit/code-index-common.js'
import { defineTool, Inject, type ToolResult } from '../tool-api/define-tool.js'
import { pickDefinitions, rank, splitName } from '../tool-kit/definitions.js'
import { counted, shownInput } from '../tool-kit/format.js'
import { formatCall } from '../tool-kit/paging.js'
import { indexSource, type Definition } from '../tool-kit/reference-source.js'

const EdgeOutput = Type.Object({
  from: Type.String(),
  to: Type.String(),
  status: Type.String({ description: 'resolved, ambiguous or unresolved' }),
  via: Type.Optional(Type.String()),
  calls: Type.Integer(),
  sites: Type.Array(Type.Object({ path: Type.String(), line: Type.Integer(), column: Type.Integer() })),
  candidates: Type.Optional(Type.Array(Type.String()))
})

/** structuredContent of get_call_graph: the nodes (by id: path:line) and the edges of each direction. */
export const GetCallGraphOutput = Type.Object({
  root: Type.String({ description: 'Id of the function asked about' }),
  nodes: Type.Array(Type.Object({ id: Type.String(), name: Type.String(), kind: Type.String(), path: Type.Optional(Type.String()), line: Type.Optional(Type.Integer()), depth: Type.Integer() })),
  callers: Type.Array(EdgeOutput),
  callees: Type.Array(EdgeOutput)
})

const GetCallGraphInput = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 200, description: 'Function, method or macro, as the code spells it; "Owner.name" for a member, e.g. "kmem_cache_alloc"' }),
  definition: Type.Optional(Type.String({ description: 'Which definition when the name has several, as path or path:line, e.g. "mm/slub.c:3420"' })),
  direction: Type.Optional(Type.Union([Type.Literal('callers'), Type.Literal('callees'), Type.Literal('both')], { default: 'both', description: 'Who calls it, what it calls, or both, e.g. "callers"' })),
  depth: Type.Optional(Type.Integer({ minimum: 1, maximum: 3, default: 1, description: 'Calls followed away from it (1–3), e.g. 2' })),
  path: Type.Optional(Type.String({ description: 'Only callers in this file or folder, e.g. "mm"' })),
  max_response_tokens: Type.Optional(Type.Integer({ minimum: MIN_RESPONSE_TOKENS, maximum: MAX_RESPONSE_TOKENS, default: 8000, description: 'Token budget, e.g. 8000' })),
  workspace: Inject('workspace'),
  codeIndex: Inject('codeIndex'),
  tokenizer: Inject('tokenizer')
})

const where = (node: GraphNode): string => node.path === undefined ? '' : ` — ${node.path}${node.line === undefined ? '' : `:${node.line}`}${node.kind === 'file' ? '' : ` (${node.kind})`}`
const siteText = (edge: GraphEdge, sites: number): string => `${counted(edge.calls, 'call')} at ${edge.sites.slice(0, sites).map(s => `${s.path}:${s.line}:${s.column}`).join(', ')}${edge.calls > sites ? ', …' : ''}`

function edgeText (edge: GraphEdge, node: GraphNode, sites: number): string {
  if (edge.status === 'unresolved') return node.kind === 'unresolved' ? `${node.name} — unresolved: no definition is indexed (${siteText(edge, sites)})` : `${node.name}${where(node)}: ${siteText(edge, sites)} (the name has no definition indexed)`
  if (edge.status === 'ambiguous') return `${node.name}${where(node)} — ambiguous: could be any of ${(edge.candidates as string[]).join(', ')} (${siteText(edge, sites)})`
  return `${node.name}${where(node)}: ${siteText(edge, sites)}`
}

/** One direction as an indented tree from the root; a node met again is named, not expanded twice. */
function tree (graph: CallGraph, direction: 'callers' | 'callees', maxDepth: number, sites: number): string[] {
  const edges = direction === 'callers' ? graph.callers : graph.callees
  const children = new Map<string, GraphEdge[]>()
  for (const edge of edges) {
    const parent = direction === 'callers' ? edge.to : edge.from
    children.set(parent, [...(children.get(parent) ?? []), edge])
  }
  const lines: string[] = []
  const shown = new Set<string>([graph.root.id])
  const visit = (id: string, depth: number): void => {
    for (const edge of children.get(id) ?? []) {
      const child = graph.nodes.get(direction === 'callers' ? edge.from : edge.to) as GraphNode
      const again = shown.has(child.id)
      lines.push(`${'  '.repeat(depth - 1)}- ${edgeText(edge, child, sites)}${again && children.has(child.id) ? ' (expanded above)' : ''}`)
      shown.add(child.id)
      if (!again && depth < maxDepth) visit(child.id, depth + 1)
    }
  }
  visit(graph.root.id, 1)
  return lines
}

/** Callers and callees of a function, to a depth of 3, each edge with its call sites and how it was resolved. */
export const getCallGraph = defineTool({
  name: 'get_call_graph',
  title: 'Get Call Graph',
  category: 'search',
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  description: 'Get the functions that call a function and the functions it calls, to a depth of 1–3, each edge with its call sites and whether it was resolved, ambiguous or unresolved.\n\n' +
    'Served from the code index. find_references lists every use of a name (not only calls); find_symbol finds a definition.',
  input: GetCallGraphInput,
  output: GetCallGraphOutput,
  task: INDEX_TASK,
  timeoutHint: 'ask for one direction, a smaller depth, or narrow the callers with path',
  examples: [
    { comment: 'Who calls it, and what does it call?', arguments: { name: 'createServer' } },
    { comment: 'Callers two levels up, in one folder', arguments: { name: 'kmem_cache_alloc', direction: 'callers', depth: 2, path: 'mm' } }
  ],
  async run (args, ctx) {
    const { name: input, definition, direction = 'both', depth = 1, path, max_response_tokens: budget = 8000, workspace, codeIndex, tokenizer } = args
    const { owner, name } = splitName(input.trim())
    if (nameToken(name) === undefined) throw toolError('INVALID_ARGUMENT', `name: "${shownInput(input, 'name')}" is not a name as code spells one (letters, digits, _ and $)`, 'pass a function\'s name, e.g. name="kmalloc"')
    const scope = await scopeOf(workspace, path, ctx.signal)
    const notes = await indexNotes(codeIndex, ctx)
    const source = indexSource(codeIndex, workspace)
    const all = source.definitions(name).sort(rank(name))
    let candidates = definition === undefined ? all : pickDefinitions(definition, all, name)
    if (owner !== undefined) candidates = candidates.filter(d => d.container === owner)
    if (owner !== undefined && candidates.length === 0) throw toolError('INVALID_ARGUMENT', `name: no definition of "${name}" belongs to "${owner}"`, `find_symbol name="${name}" lists its definitions and their owners`)
    const root: Definition = candidates[0] ?? { path: '', shown: '', name, kind: 'unresolved', container: null, line: 0, endLine: 0, signature: '' }
    if (all.length === 0) notes.push(`No definition of "${name}" is indexed: its callers are the calls of the name; what it calls is not known.`)
    else if (candidates.length > 1) notes.push(`"${name}" has ${all.length} definitions; this graph is of the first, ${root.shown}:${root.line} — pass definition="${candidates[1].shown}:${candidates[1].line}" (or another) for a different one.`)
    const graph = buildCallGraph(codeIndex, source, root, { depth, callers: direction !== 'callees', callees: direction !== 'callers' && all.length > 0, scope })
    const heading = `# Call graph of ${name}${where(graph.root)}: ${direction === 'both' ? 'callers and callees' : direction}, depth ${depth}`
    const render = (sites: number, maxDepth: number, maxEdges = Infinity): Rung<number> => {
      const lines = [heading, ...notes]
      let room = maxEdges
      for (const side of ['callers', 'callees'] as const) {
        if (direction !== 'both' && direction !== side) continue
        const edges = side === 'callers' ? graph.callers : graph.callees
        const listed = tree(graph, side, maxDepth, sites)
        lines.push(`## ${side === 'callers' ? 'Callers' : 'Callees'} (${edges.length} ${edges.length === 1 ? 'edge' : 'edges'})`, ...listed.slice(0, room))
        if (listed.length > room) lines.push(`… ${listed.length - room} more not shown (max_response_tokens=${budget}): ask for one direction, or narrow with path`)
        room = Math.max(0, room - listed.length)
        if (edges.length === 0) lines.push(side === 'callers' ? 'No indexed code calls it.' : all.length === 0 ? 'Unknown: it has no definition indexed.' : 'It calls nothing the index knows of.')
      }
      for (const cut of graph.cut) {
        const node = graph.nodes.get(cut.node) as GraphNode
        lines.push(cut.direction === 'callers'
          ? `Left out: ${counted(cut.left, 'more call site')} of ${node.name} — ${formatCall('find_references', { name: node.name, kind: 'call' })} lists them all, or narrow with path.`
          : `Left out: ${counted(cut.left, 'more name')} ${node.name} calls.`)
      }
      if (graph.unfollowed > 0) lines.push(`Not followed: ${counted(graph.unfollowed, 'function')} past ${graph.nodes.size} nodes — ask for a smaller depth or one direction.`)
      if (maxDepth < depth) lines.push(`Note: cut to depth ${maxDepth} to fit max_response_tokens=${budget}; ask for one direction or raise max_response_tokens.`)
      return { text: lines.join('\n'), info: maxDepth }
    }
    // Fewer call sites per edge, then less depth; past that, as many edges as fit (the heading always goes out).
    const rungs = [() => render(3, depth), () => render(1, depth), ...Array.from({ length: depth - 1 }, (_, i) => () => render(1, depth - 1 - i))]
    const laddered = await fitLadder(rungs, budget, tokenizer, ctx.signal)
    const fitted: Rung<number> = laddered.measured.fits
      ? laddered
      /* c8 ignore next: the heading and notes with no edge fit any budget a call may ask for (1,000 tokens and up) */
      : (await fitLargest(0, graph.callers.length + graph.callees.length, n => render(1, 1, n), budget, tokenizer, ctx.signal)) ?? render(1, 1, 0)
    const keep = (edge: GraphEdge): boolean => Math.max((graph.nodes.get(edge.from) as GraphNode).depth, (graph.nodes.get(edge.to) as GraphNode).depth) <= fitted.info
    const edgeData = (edge: GraphEdge): Record<string, unknown> => ({ from: edge.from, to: edge.to, status: edge.status, ...(edge.via === undefined ? {} : { via: edge.via }), calls: edge.calls, sites: edge.sites, ...(edge.candidates === undefined ? {} : { candidates: edge.candidates }) })
    const result: ToolResult = {
      content: [{ type: 'text', text: fitted.text }],
      structuredContent: {
        root: graph.root.id,
        nodes: [...graph.nodes.values()].filter(n => n.depth <= fitted.info).map(n => ({ id: n.id, name: n.name, kind: n.kind, ...(n.path === undefined ? {} : { path: n.path }), ...(n.line === undefined ? {} : { line: n.line }), depth: n.depth })),
        callers: graph.callers.filter(keep).map(edgeData),
        callees: graph.callees.filter(keep).map(edgeData)
      }
    }
    return result
  }
})
