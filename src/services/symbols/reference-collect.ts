import { nameToken, packSite, REFERENCE_KINDS, sitesBlob, type FileReferences, type ReferenceKind } from './references.js'

/** A capture as the collector reads it: web-tree-sitter's QueryCapture, structurally. */
export interface CapturedNode {
  name: string
  node: { readonly startIndex: number, readonly endIndex: number, readonly text: string }
}

/** Which kind wins when several patterns capture one name: the most specific use. */
const STRENGTH: Readonly<Record<ReferenceKind, number>> = { import: 7, export: 6, declaration: 5, call: 4, type: 3, field: 2, reference: 1 }
/** Kinds an @ignore range leaves out: the words of a path (`java.util`, `crate::store`) name no definition. */
const PATH_KINDS = new Set<ReferenceKind>(['reference', 'field', 'type'])
/** Kinds a local of an enclosing function can stand for (a field or an import never does). */
const LOCAL_KINDS = new Set<ReferenceKind>(['call', 'reference', 'type'])
const KIND_INDEX = new Map<string, number>(REFERENCE_KINDS.map((kind, i) => [kind, i]))

const WORD = /[\p{L}\p{N}_$]+/uy
/** The identifier starting at `at` (every capture the queries make starts with one). */
const wordAt = (text: string, at: number): string => {
  WORD.lastIndex = at
  return (WORD.exec(text) as RegExpExecArray)[0]
}

/** A scope and the names declared in it, each with where its declaration starts (it counts from there on). */
interface Scope { start: number, end: number, locals: Map<string, number> }
interface Candidate { at: number, kind: ReferenceKind, name?: string }

/** Walks positions in order with the stack of scopes enclosing each (scopes sorted by start; a syntax tree's scopes nest). */
function sweep (scopes: readonly Scope[], positions: readonly number[], visit: (at: number, open: readonly Scope[]) => void): void {
  const open: Scope[] = []
  let next = 0
  for (const at of positions) {
    while (next < scopes.length && scopes[next].start <= at) {
      const scope = scopes[next++]
      while (open.length > 0 && (open.at(-1) as Scope).end <= scope.start) open.pop()
      open.push(scope)
    }
    while (open.length > 0 && (open.at(-1) as Scope).end <= at) open.pop()
    visit(at, open)
  }
}

// Words of C and C++ that a macro body holds but that name nothing.
const C_WORDS = new Set(('auto break case char const continue default do double else enum extern float for goto if inline int long ' +
  'register restrict return short signed sizeof static struct switch typedef union unsigned void volatile while _Bool _Complex ' +
  'typeof __typeof__ __typeof asm __asm__ __asm defined __VA_ARGS__ __attribute__ __attribute __extension__ __volatile__ __inline ' +
  'class namespace template typename this new delete using operator virtual public private protected friend nullptr bool true false').split(' '))
const MACRO_TOKENS = /\/\*[\s\S]*?(?:\*\/|$)|\/\/[^\n]*|"(?:[^"\\\n]|\\.)*"?|'(?:[^'\\\n]|\\.)*'?|\d[\w.]*|[\p{L}_$][\p{L}\p{N}_$]*|##|->|\S/gu
const IDENTIFIER = /^[\p{L}_$]/u

/**
 * The uses of names in a C macro body, which the grammar leaves as text: an identifier followed by `(` is a
 * call, after `->` or `.` a field, after struct/union/enum a type; pasted (`##`) and stringified (`#`) words,
 * keywords, strings and comments are left out.
 */
function macroUses (body: string, offset: number, out: Candidate[]): void {
  const tokens = [...body.matchAll(MACRO_TOKENS)]
  tokens.forEach((token, i) => {
    const word = token[0]
    if (!IDENTIFIER.test(word) || C_WORDS.has(word)) return
    const before = tokens[i - 1]?.[0]
    const after = tokens[i + 1]?.[0]
    if (before === '#' || before === '##' || after === '##') return
    const kind: ReferenceKind = after === '(' ? 'call' : before === '->' || before === '.' ? 'field' : before === 'struct' || before === 'union' || before === 'enum' ? 'type' : 'reference'
    out.push({ at: offset + (token.index as number), kind, name: word })
  })
}

/** Line starts of a text (offsets in UTF-16 code units). */
function lineStarts (text: string): number[] {
  const starts = [0]
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) starts.push(i + 1)
  return starts
}

/**
 * The references of one parsed file from its reference query's captures (document order), packed for the
 * index. A name that is a definition's own (`definitionStarts`: where each outline @name starts), a local's
 * declaration or a @skip is no reference; a call, reference or type whose name is a local of an enclosing scope
 * is left out (it names that local, not a definition the outline could hold).
 */
export function collectReferences (captures: readonly CapturedNode[], text: string, definitionStarts: ReadonlySet<number>): FileReferences {
  const scopes: Scope[] = []
  const locals: Array<{ at: number, name: string }> = []
  const excluded = new Set<number>(definitionStarts)
  const strongest = new Map<number, ReferenceKind>()
  const candidates: Candidate[] = []
  const imports: string[] = []
  const ignored: Array<{ start: number, end: number }> = []
  for (const { name, node } of captures) {
    // A node tree-sitter made up to recover from an error (MISSING, zero width: `static DEFINE_PER_CPU(struct s, v);`) names nothing.
    if (node.endIndex === node.startIndex) continue
    const at = node.startIndex
    if (name === 'scope') scopes.push({ start: at, end: node.endIndex, locals: new Map() })
    else if (name === 'ignore') ignored.push({ start: at, end: node.endIndex })
    else if (name === 'local') {
      locals.push({ at, name: wordAt(text, at) })
      excluded.add(at)
    } else if (name === 'skip') excluded.add(at)
    else if (name === 'source') imports.push(node.text.replace(/^["'<]|[">']$/g, ''))
    else if (name === 'macro') macroUses(node.text, at, candidates)
    else {
      const kind = name as ReferenceKind
      const known = strongest.get(at)
      if (known === undefined || STRENGTH[known] < STRENGTH[kind]) strongest.set(at, kind)
    }
  }
  // By start; captures come outer node first, and the sort keeps that order for scopes that start together.
  scopes.sort((a, b) => a.start - b.start)
  let l = 0
  sweep(scopes, locals.map(local => local.at), (at, open) => {
    const { name } = locals[l++]
    const scope = open.at(-1)
    if (scope !== undefined && !scope.locals.has(name)) scope.locals.set(name, at)
  })
  for (const [at, kind] of strongest) if (!excluded.has(at)) candidates.push({ at, kind })
  candidates.sort((a, b) => a.at - b.at)
  // Paths come in document order and do not overlap: one pass drops the words inside them.
  let i = 0
  const kept = candidates.filter(({ at, kind }) => {
    while (i < ignored.length && ignored[i].end <= at) i++
    return !(i < ignored.length && ignored[i].start <= at && PATH_KINDS.has(kind))
  })

  const names: string[][] = REFERENCE_KINDS.map(() => [])
  const sites: number[][] = REFERENCE_KINDS.map(() => [])
  const starts = lineStarts(text)
  let line = 0
  let c = 0
  sweep(scopes, kept.map(candidate => candidate.at), (at, open) => {
    const candidate = kept[c++]
    const name = candidate.name ?? wordAt(text, at)
    if (LOCAL_KINDS.has(candidate.kind) && open.some(scope => (scope.locals.get(name) ?? Infinity) < at)) return
    const token = nameToken(name)
    if (token === undefined) return
    while (line + 1 < starts.length && starts[line + 1] <= at) line++
    const k = KIND_INDEX.get(candidate.kind) as number
    names[k].push(token)
    sites[k].push(packSite(line + 1, at - starts[line] + 1))
  })
  const packed = new Uint32Array(REFERENCE_KINDS.length + sites.reduce((sum, s) => sum + s.length, 0))
  let next = REFERENCE_KINDS.length
  sites.forEach((list, k) => {
    packed[k] = list.length
    packed.set(list, next)
    next += list.length
  })
  return { names: names.map(list => list.join(' ')), sites: sitesBlob(packed), imports }
}
