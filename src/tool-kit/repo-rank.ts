import type { MapDefinition, MapUse } from '../services/code-index/index.js'
import type { ReferenceKind } from '../services/symbols/index.js'

/** A definition with its rank: how widely the rest of the code uses it, and how many files do. */
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
 * Ranks the files of a scope by how widely the rest of the code uses their definitions, on the reference graph:
 * an edge from each file using a name to each file of the scope defining it (none from a file that defines the
 * name itself: it means its own) — a use as a type counted for types, a call or reference for functions and
 * macros, a field use for members only. Each file using a scope file's names gives it one vote, shared among the
 * names of it that it uses (an aggregator importing forty names of one file gives it one vote, not forty); a name
 * scores log(1 + its votes ÷ the definitions of the name in the whole index) — a name defined in ten places gives
 * each a tenth, and a name every file uses counts as one name, not as thousands (`kfree`, `memset`: defining it
 * does not make a file the folder's core). A file scores the sum over its names, so the files many of whose
 * definitions the code uses lead. Measured against PageRank over the same graph (aider's map, which a single
 * heavily used name pulled) on four Linux folders: docs/code-intelligence.md.
 */
export function rankRepository (definitions: readonly MapDefinition[], uses: readonly MapUse[], tokenOf: (name: string) => string, definers: (name: string) => number): RankedFile[] {
  // Targets: a token and class the scope defines, numbered; each with its defining files, users and weight divisor.
  const numbered = new Map<string, number>()
  const targets: Array<{ files: Set<number>, users: Set<number>, split: number }> = []
  const targetOf = (d: MapDefinition): number => numbered.get(`${classOf(d)}${tokenOf(d.name)}`) as number
  for (const d of definitions) {
    const key = `${classOf(d)}${tokenOf(d.name)}`
    const known = numbered.get(key)
    if (known === undefined) {
      numbered.set(key, targets.length)
      targets.push({ files: new Set([d.file]), users: new Set(), split: Math.max(1, definers(d.name)) })
    } else {
      targets[known].files.add(d.file)
    }
  }
  for (const use of uses) {
    for (const cls of CLASSES) {
      const target = numbered.get(`${cls}${use.token}`)
      if (target === undefined || !USES[cls].has(use.kind) || targets[target].files.has(use.file)) continue
      targets[target].users.add(use.file)
    }
  }
  const byFile = new Map<number, MapDefinition[]>()
  for (const d of definitions) {
    const mine = byFile.get(d.file)
    if (mine === undefined) byFile.set(d.file, [d])
    else mine.push(d)
  }
  const ranked: RankedFile[] = []
  for (const [file, mine] of byFile) {
    // A name defined twice in a file (#ifdef branches) counts once for the file.
    const own = new Set(mine.map(targetOf))
    // How many of this file's names each user uses: its one vote is shared among them.
    const used = new Map<number, number>()
    for (const target of own) for (const user of targets[target].users) used.set(user, (used.get(user) ?? 0) + 1)
    const scores = new Map<number, number>()
    for (const target of own) {
      let votes = 0
      for (const user of targets[target].users) votes += 1 / (used.get(user) as number)
      scores.set(target, Math.log1p(votes / targets[target].split))
    }
    const shown = mine.map(d => ({ ...d, score: scores.get(targetOf(d)) as number, users: targets[targetOf(d)].users.size }))
    ranked.push({ id: file, score: [...scores.values()].reduce((sum, s) => sum + s, 0), definitions: shown.sort((a, b) => b.score - a.score || a.line - b.line) })
  }
  return ranked.sort((a, b) => b.score - a.score || a.id - b.id)
}
