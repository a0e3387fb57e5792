import type { MapDefinition, MapUse } from '../services/code-index/index.js'
import type { ReferenceKind } from '../services/symbols/index.js'

/** A definition with its rank: the share of the reference graph's weight flowing to it, and how many files use it. */
export interface RankedDefinition extends MapDefinition {
  score: number
  /** Other files that use its name the way it is used (and could mean it). */
  users: number
}

/** A file of the scope with its definitions, best first. */
export interface RankedFile {
  id: number
  score: number
  definitions: RankedDefinition[]
}

/** PageRank's damping and rounds (aider's repository map uses networkx's default damping, 0.85). */
const DAMPING = 0.85
const ROUNDS = 30

/**
 * Definitions that are types; members (a definition with an owner: a method, a class's constant); every other
 * kind is a value (a function, a macro …) — each with the uses that can mean one. A field use (`p->lru`) means a
 * member, never a top-level function or macro of that name (C's `#define lru …`).
 */
const TYPE_KINDS = new Set(['class', 'interface', 'trait', 'struct', 'union', 'enum', 'type', 'impl', 'module'])
type DefinitionClass = 'type' | 'member' | 'value'
const USES: Record<DefinitionClass, ReadonlySet<ReferenceKind>> = {
  type: new Set<ReferenceKind>(['type', 'reference', 'call', 'import', 'export']),
  member: new Set<ReferenceKind>(['call', 'reference', 'field']),
  value: new Set<ReferenceKind>(['call', 'reference', 'import', 'export'])
}
const CLASSES = Object.keys(USES) as DefinitionClass[]
const classOf = (d: MapDefinition): DefinitionClass => TYPE_KINDS.has(d.kind) ? 'type' : d.container === null ? 'value' : 'member'

/**
 * Ranks the definitions of a scope by how much the rest of the code uses them, as aider's repository map does: a
 * graph whose nodes are files and whose edges go from a file using a name to each file of the scope defining it
 * (none from a file that defines the name itself: it means its own), weighted by the square root of the uses — a
 * use as a type counted for types, a call or reference for functions and macros, a field use for members only —
 * and shared among every definition of the name in the whole index (`definers`: a name defined in ten places means
 * each a tenth). PageRank over it, where a file's vote is shared among all the names it uses (`allUses`: its
 * uses in the whole index) and the scope gets the part of it that falls to the scope's names — a file that uses
 * three of a folder's names among two hundred others does not give the folder its whole vote. What each edge
 * carries goes to the definitions it points to; files come out by the sum of their definitions' shares, best first.
 */
export function rankRepository (definitions: readonly MapDefinition[], uses: readonly MapUse[], tokenOf: (name: string) => string, definers: (name: string) => number, allUses: (file: number) => number): RankedFile[] {
  // Targets: a token and class the scope defines, numbered; each with its defining files and the weight divisor.
  const numbered = new Map<string, number>()
  const targets: Array<{ files: Set<number>, split: number }> = []
  const targetOf = (d: MapDefinition): number => numbered.get(`${classOf(d)}${tokenOf(d.name)}`) as number
  for (const d of definitions) {
    const key = `${classOf(d)}${tokenOf(d.name)}`
    const known = numbered.get(key)
    if (known === undefined) {
      numbered.set(key, targets.length)
      targets.push({ files: new Set([d.file]), split: Math.max(1, definers(d.name)) })
    } else {
      targets[known].files.add(d.file)
    }
  }
  // Uses per using file and target.
  const counts = new Map<number, Map<number, number>>()
  for (const use of uses) {
    for (const cls of CLASSES) {
      const target = numbered.get(`${cls}${use.token}`)
      if (target === undefined || !USES[cls].has(use.kind)) continue
      const byTarget = counts.get(use.file) ?? new Map<number, number>()
      byTarget.set(target, (byTarget.get(target) ?? 0) + use.count)
      counts.set(use.file, byTarget)
    }
  }
  const out = new Map<number, Array<{ to: number, target: number, weight: number }>>()
  // The part of a file's vote that falls to the scope: its uses of the scope's names among all its uses.
  const part = new Map<number, number>()
  const nodes = new Set<number>()
  for (const [from, byTarget] of counts) {
    const edges: Array<{ to: number, target: number, weight: number }> = []
    let used = 0
    for (const [target, count] of byTarget) {
      // A file that defines the name itself means its own definition (as find_references ties it): no edge.
      if (targets[target].files.has(from)) continue
      used += count
      for (const to of targets[target].files) edges.push({ to, target, weight: Math.sqrt(count) / targets[target].split })
    }
    if (edges.length === 0) continue
    out.set(from, edges)
    part.set(from, Math.min(1, used / Math.max(used, allUses(from))))
    nodes.add(from)
    for (const e of edges) nodes.add(e.to)
  }
  // The rounds run over dense arrays: a node's place, and per using file its edges' ends and weights.
  const ids = [...nodes]
  const place = new Map(ids.map((id, i) => [id, i]))
  const sources = [...out].map(([from, edges]) => ({
    at: place.get(from) as number,
    part: part.get(from) as number,
    total: edges.reduce((sum, e) => sum + e.weight, 0),
    to: Int32Array.from(edges, e => place.get(e.to) as number),
    weight: Float64Array.from(edges, e => e.weight)
  }))
  let rank = new Float64Array(ids.length).fill(1 / ids.length)
  for (let round = 0; round < ROUNDS; round++) {
    // Rank that leaves the graph (files without uses here; the uses of names defined outside the scope) comes back evenly.
    let away = rank.reduce((sum, r) => sum + r, 0)
    for (const source of sources) away -= rank[source.at] * source.part
    const next = new Float64Array(ids.length).fill((1 - DAMPING + DAMPING * away) / ids.length)
    for (const source of sources) {
      const share = DAMPING * rank[source.at] * source.part / source.total
      for (let i = 0; i < source.to.length; i++) next[source.to[i]] += share * source.weight[i]
    }
    rank = next
  }
  // What a file's edges carry per unit of weight.
  const unit = new Map(sources.map(source => [ids[source.at], rank[source.at] * source.part / source.total]))
  // What each edge carries goes to the definitions of its target in the file it points to.
  const carried = new Map<number, Map<number, { score: number, users: number }>>()
  for (const [from, edges] of out) {
    const share = unit.get(from) as number
    for (const e of edges) {
      const byTarget = carried.get(e.to) ?? new Map<number, { score: number, users: number }>()
      const known = byTarget.get(e.target) ?? { score: 0, users: 0 }
      byTarget.set(e.target, { score: known.score + share * e.weight, users: known.users + 1 })
      carried.set(e.to, byTarget)
    }
  }
  const byFile = new Map<number, RankedFile>()
  for (const d of definitions) {
    const got = carried.get(d.file)?.get(targetOf(d)) ?? { score: 0, users: 0 }
    let file = byFile.get(d.file)
    if (file === undefined) byFile.set(d.file, file = { id: d.file, score: 0, definitions: [] })
    file.definitions.push({ ...d, ...got })
  }
  for (const file of byFile.values()) {
    // A name defined twice in a file (#ifdef branches) counts once for the file.
    file.score = [...new Map(file.definitions.map(d => [targetOf(d), d.score])).values()].reduce((sum, s) => sum + s, 0)
    file.definitions.sort((a, b) => b.score - a.score || a.line - b.line)
  }
  return [...byFile.values()].sort((a, b) => b.score - a.score || a.id - b.id)
}
