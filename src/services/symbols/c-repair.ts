import type { CSource } from './c-source.js'
import { continues } from './c-tokens.js'
import type { RawDefinition } from './parser.js'

// The tree's C outline against the file's top-level braces (as c-source.ts counts them, and ctags): a function ends
// at its body's `}`, its head holds no top-level `;`, and no function lies inside another or inside anything else.

/** A definition as the query found it, with the offsets of its name and of its body's `{` (functions). */
export interface FoundDefinition extends RawDefinition {
  nameAt: number
  body?: number
}

/** What the tree's functions say against the braces. */
export interface BraceCheck {
  /** The definitions kept: a function's head and end set by its braces; "functions" inside a body left out. */
  kept: FoundDefinition[]
  /**
   * The tree disagrees with the braces in a way the kept definitions cannot mend: a function ended elsewhere than at
   * its body's `}` (what followed was read inside it), a body follows a `)` with no function to claim it, or
   * something other than a function holds one. The file is then parsed again with every function body left out.
   */
  broken: boolean
  /** Top-level blocks after a `)` that no function claims. */
  unclaimed: number[]
}

/** Index of the last of the ascending `offsets` at or below `at`, or -1. */
function lastAtOrBelow (offsets: readonly number[], at: number): number {
  let low = 0
  let high = offsets.length - 1
  let found = -1
  while (low <= high) {
    const mid = (low + high) >> 1
    if (offsets[mid] <= at) {
      found = mid
      low = mid + 1
    } else {
      high = mid - 1
    }
  }
  return found
}

/** The closed top-level block whose braces hold `at`, or -1 (a `{` never closed says nothing: the count is off). */
function blockHolding (source: CSource, at: number): number {
  const k = lastAtOrBelow(source.opens, at - 1)
  return k !== -1 && source.closes[k] >= at ? k : -1
}

function skipped (source: CSource, at: number): boolean {
  const k = lastAtOrBelow(source.skipped, at)
  return k !== -1 && k % 2 === 0 && at < source.skipped[k + 1]
}

/** The block whose `{` is at `at`, or -1. */
function blockAt (source: CSource, at: number | undefined): number {
  if (at === undefined) return -1
  const k = lastAtOrBelow(source.opens, at)
  return k !== -1 && source.opens[k] === at ? k : -1
}

/** Row and column of string offsets, from the line starts (counted once per file, when first asked). */
function positions (text: string): (at: number) => { row: number, column: number } {
  let starts: number[] | undefined
  return (at) => {
    if (starts === undefined) {
      starts = [0]
      for (let k = text.indexOf('\n'); k !== -1; k = text.indexOf('\n', k + 1)) starts.push(k + 1)
    }
    const row = lastAtOrBelow(starts, at)
    return { row, column: at - starts[row] }
  }
}

/** End of the last top-level macro invocation on a line of its own before `at` (`NOKPROBE_SYMBOL(f)`), or 0. */
function invocationBefore (source: CSource, at: number): number {
  const { loose } = source
  let low = 0
  let high = loose.length / 2 - 1
  let end = 0
  while (low <= high) {
    const mid = (low + high) >> 1
    if (loose[2 * mid + 1] <= at) {
      end = loose[2 * mid + 1]
      low = mid + 1
    } else {
      high = mid - 1
    }
  }
  return end
}

/**
 * Where the head of block `k`'s function can start: after the last top-level `;`, `}` or invocation before it — or
 * at its old-style head, whose declarations end in `;`.
 */
function unitStart (source: CSource, k: number): number {
  const open = source.opens[k]
  const old = source.oldStyle.indexOf(open)
  if (old !== -1) return source.oldStyle[old - 1]
  const semicolon = source.semicolons[lastAtOrBelow(source.semicolons, open)] ?? -1
  return Math.max(semicolon + 1, k > 0 ? source.closes[k - 1] + 1 : 0, invocationBefore(source, open))
}

/**
 * A function set by its braces: its head starts after the last top-level `;` or `}` before its body (the grammar may
 * take the declaration above into a head it could not read), its end is its body's `}`.
 */
function braced (d: FoundDefinition, k: number, source: CSource, at: (offset: number) => { row: number, column: number }): FoundDefinition {
  const text = source.text
  let from = unitStart(source, k)
  for (;;) {
    while (from < d.nameAt && /\s/.test(text[from])) from++
    const end = text.startsWith('/*', from) ? text.indexOf('*/', from) : -1
    if (end === -1) break
    from = end + 2
  }
  // A head holding a `;` before its name is an old-style one (`int f(a) int a; {`): left as it is.
  const head = from <= d.from || from > d.nameAt ? {} : { from, start: at(from).row }
  const close = source.closes[k]
  if (close === -1 || close + 1 === d.to) return { ...d, ...head }
  const end = at(close)
  return { ...d, ...head, to: close + 1, end: end.row, endColumn: end.column + 1 }
}

/** Words that name no function: a "function" so named is a statement the grammar misread (`else if (…) {` in #if 0). */
const KEYWORDS = new Set(['if', 'else', 'for', 'while', 'do', 'switch', 'case', 'return', 'sizeof', 'goto', 'typeof', '__typeof__', '__typeof', '__attribute__', 'asm', '__asm__'])

/** Checks (and mends) the tree's C definitions against the braces. */
export function checkAgainstBraces (found: readonly FoundDefinition[], source: CSource): BraceCheck {
  const at = positions(source.text)
  const kept: Array<FoundDefinition | undefined> = []
  const claimedBy = new Int32Array(source.opens.length).fill(-1)
  let broken = false
  // A function in #if 0 is judged by the tree alone: one inside another is a statement the grammar misread.
  const functions = found.filter(d => d.kind === 'function')
  const inside = (d: FoundDefinition): boolean => functions.some(o => o.from <= d.from && d.to <= o.to && o.to - o.from > d.to - d.from)
  for (const d of found) {
    if (d.kind === 'function' && KEYWORDS.has(d.name)) continue
    if (d.kind !== 'function' || skipped(source, d.from)) {
      if (d.kind !== 'function' || !inside(d)) kept.push(d)
      continue
    }
    if (blockHolding(source, d.from) !== -1) continue
    const k = blockAt(source, d.body)
    if (k === -1) {
      broken = true
      kept.push(d)
      continue
    }
    // Named by a macro invocation above its real head (`BTF_SET_END(x)` … `void f(void) {`): read again without it.
    if (invocationBefore(source, source.opens[k]) > d.nameAt) {
      broken = true
      continue
    }
    if (source.closes[k] !== -1 && d.to !== source.closes[k] + 1) broken = true
    const mended = braced(d, k, source, at)
    // Two heads for one body: the nearer one is the function (the other took in a macro invocation above it).
    const other = claimedBy[k]
    if (other !== -1 && (kept[other] as FoundDefinition).nameAt > mended.nameAt) continue
    if (other !== -1) kept[other] = undefined
    claimedBy[k] = kept.length
    kept.push(mended)
  }
  const result = kept.filter(d => d !== undefined)
  const unclaimed: number[] = []
  source.afterParen.forEach((after, k) => {
    if (after && claimedBy[k] === -1 && source.closes[k] !== -1 && !skipped(source, source.opens[k])) unclaimed.push(k)
  })
  const held = holdingFunctions(result, source, at)
  return { kept: held.definitions, broken: broken || unclaimed.length > 0 || held.found, unclaimed }
}

/** The definitions with those holding a function ended by the braces (`within`); `found`: there was one. */
function holdingFunctions (definitions: FoundDefinition[], source: CSource, at: (offset: number) => { row: number, column: number }): { definitions: FoundDefinition[], found: boolean } {
  const starts = definitions.filter(d => d.kind === 'function').map(d => d.from).sort((a, b) => a - b)
  const holds = (d: FoundDefinition): boolean => {
    const next = lastAtOrBelow(starts, d.from) + 1
    return d.kind !== 'function' && next < starts.length && starts[next] < d.to
  }
  const found = definitions.some(holds)
  return { definitions: found ? definitions.map(d => holds(d) ? within(d, source, at) : d) : definitions, found }
}

/**
 * A struct, union, enum, type or macro the grammar ran on into the functions after it (a body of bit-field macros it
 * could not read, a `#define` ending in a `\` before an empty line), ended where it ends: a macro at the end of its
 * logical line; inside a top-level block, at that block's `}`; else at its own block's `}` (a `typedef` at the `;`
 * after it).
 */
function within (d: FoundDefinition, source: CSource, at: (offset: number) => { row: number, column: number }): FoundDefinition {
  let to = d.to
  const k = blockHolding(source, d.from)
  if (d.kind === 'macro') {
    to = source.text.indexOf('\n', d.from)
    while (to !== -1 && continues(source.text, to)) to = source.text.indexOf('\n', to + 1)
    to = to === -1 ? source.text.length : to + 1
  } else if (k !== -1) to = source.closes[k] + 1
  else {
    const own = lastAtOrBelow(source.opens, d.from - 1) + 1
    if (own < source.opens.length && source.opens[own] < d.to && source.closes[own] !== -1) {
      to = source.closes[own] + 1
      const semicolon = source.semicolons[lastAtOrBelow(source.semicolons, to) + 1]
      if (d.kind === 'type' && semicolon !== undefined && semicolon < d.to) to = semicolon + 1
    }
  }
  const end = at(to - 1)
  return { ...d, to, end: end.row, endColumn: end.column + 1 }
}

/** The blocks parsed again without their inside: those after a `)`, and the bodies the tree's functions claimed. */
function bodies (found: readonly FoundDefinition[], source: CSource): boolean[] {
  const body = source.afterParen.map((after, k) => after && source.closes[k] !== -1)
  for (const d of found) {
    const k = blockAt(source, d.body)
    if (k !== -1 && source.closes[k] !== -1) body[k] = true
  }
  return body
}

/** The text parsed again: function bodies and top-level macro invocations without their `;` left blank. */
export function reparseText (found: readonly FoundDefinition[], source: CSource): string {
  const blank: number[] = []
  bodies(found, source).forEach((body, k) => { if (body) blank.push(source.opens[k] + 1, source.closes[k]) })
  blank.push(...source.loose)
  const spans = Array.from({ length: blank.length / 2 }, (_, k) => [blank[2 * k], blank[2 * k + 1]]).sort((a, b) => a[0] - b[0])
  const parts: string[] = []
  let at = 0
  for (const [from, to] of spans) {
    if (from < at) continue
    parts.push(source.text.slice(at, from), source.text.slice(from, to).replace(/[^\r\n]/g, ' '))
    at = to
  }
  parts.push(source.text.slice(at))
  return parts.join('')
}

/**
 * A function the grammar cannot see even without bodies (a head split over `#if` branches, one holding a macro it
 * does not know), from its head's words to its body's `}`: named by a word followed by `(` — of those in the fewest
 * parentheses (`typeof(x->call)(find_entry(uint type))` is find_entry), the last not all capitals
 * (`NORETURN PRINTF(1, 2) die(const char *str, …)` is die), else the first (`SYSCALL_DEFINE5(clone, …)`, a
 * macro-made head) — as ctags names it.
 */
function lexicalFunction (k: number, source: CSource, at: (offset: number) => { row: number, column: number }): FoundDefinition | undefined {
  const text = source.text
  const tokens = /\/\*[^]*?\*\/|\/\/[^\n]*|^[ \t]*#(?:[^\n]*\\\r?\n)*[^\n]*|"(?:[^"\\\n]|\\.)*"|([A-Za-z_$][\w$]*)(?=\s*\()|([()])/gm
  tokens.lastIndex = unitStart(source, k)
  const named: Array<{ word: RegExpExecArray, depth: number }> = []
  let depth = 0
  for (let m = tokens.exec(text); m !== null && m.index < source.opens[k]; m = tokens.exec(text)) {
    if (m[2] !== undefined) depth += m[2] === '(' ? 1 : -1
    else if (m[1] !== undefined && !KEYWORDS.has(m[1])) named.push({ word: m, depth })
  }
  const least = named.filter(n => n.depth === Math.min(...named.map(n => n.depth))).map(n => n.word)
  const word = least.findLast(m => /[a-z]/.test(m[1])) ?? least[0]
  if (word === undefined) return undefined
  const head = at(word.index)
  const end = at(source.closes[k])
  return { kind: 'function', name: word[1], start: head.row, nameRow: head.row, nameAt: word.index, end: end.row, endColumn: end.column + 1, from: word.index, to: source.closes[k] + 1, body: source.opens[k] }
}

/**
 * The outline of a file parsed again without its function bodies: the second parse's definitions checked against the
 * braces, what the first parse found inside the bodies left out (a `#define` in a function) other than functions,
 * and a function read from its head's words for each body still unclaimed.
 */
export function mergeReparsed (first: readonly FoundDefinition[], again: readonly FoundDefinition[], source: CSource): FoundDefinition[] {
  const body = bodies(first, source)
  const inBody = (d: FoundDefinition): boolean => {
    const k = blockHolding(source, d.from)
    return k !== -1 && body[k] && d.to <= source.closes[k]
  }
  const check = checkAgainstBraces(again, source)
  const at = positions(source.text)
  const merged = [...check.kept, ...first.filter(d => d.kind !== 'function' && inBody(d))]
  for (const k of check.unclaimed) {
    const made = lexicalFunction(k, source, at)
    if (made !== undefined) merged.push(made)
  }
  return holdingFunctions(merged, source, at).definitions
}
