/**
 * A screen in front of the `ignore` package: from a rule set's lines, one regular expression over a single path
 * segment that every segment a rule's match needs passes. A path none of whose segments passes matches no rule of
 * the set, nor does any folder above it, so `ignore` would answer "neither ignored nor re-included": the walk
 * then skips the set's rules (`ignore` tests them one regex at a time, ~90 for Linux's root .gitignore).
 *
 * Each rule is screened by one literal run of its pattern — characters `ignore` matches as themselves, ASCII only
 * (its case-insensitive match of an ASCII character is that character's ASCII case pair, nothing else) — with
 * where the run sits in a segment: a run at the pattern's start or after a `/` starts a segment, one at the end
 * or before a `/` ends one. A rule with no such run makes the set unscreened (null): every path is tested.
 */

/** Characters `ignore` matches as themselves wherever they stand past a leading `!` or `#`. */
const PLAIN = /^[A-Za-z0-9._~,=%&;:<>#!'"@-]$/
const BOM = '\uFEFF'

/** A run of literal characters every match of a rule holds, and whether it starts or ends a path segment. */
interface Literal { text: string, start: boolean, end: boolean }

const escape = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
const score = (l: Literal): number => (Number(l.start) + Number(l.end)) * 1000 + l.text.length

/** The best literal of one pattern line; null for a line that is no rule, undefined for a rule without one. */
export function literalOf (line: string): Literal | null | undefined {
  // `ignore` strips a byte-order mark only from a file's first line: after one, '#' and '!' may be literal or not.
  const bom = line.startsWith(BOM)
  let body = bom ? line.slice(1) : line
  if (!bom && body.startsWith('#')) return null
  if (body.startsWith('!')) body = body.slice(1)
  // Spaces only: no rule, unless the mark was not stripped (then the mark itself is the pattern).
  if (/^ *$/.test(body)) return bom ? undefined : null
  let best: Literal | undefined
  let run = ''
  let start = !bom
  const take = (end: boolean): void => {
    const literal = { text: run, start, end }
    if (run !== '' && (best === undefined || score(literal) > score(best))) best = literal
    run = ''
  }
  for (let i = 0; i < body.length; i++) {
    const ch = body[i]
    if (PLAIN.test(ch)) {
      run += ch
      continue
    }
    // What follows a bracket expression is past a part whose length no scan here can tell: not screened by.
    if (ch === '[') {
      take(false)
      return best
    }
    take(ch === '/')
    start = ch === '/'
    // An escaped character is literal, but the run stops at it (and the one after it starts no segment).
    if (ch === '\\') i++
  }
  take(true)
  return best
}

/** The screen of a rule set's lines: matches a segment some rule may need; null when some rule cannot be screened. */
export function screenOf (lines: readonly string[]): RegExp | null {
  const kinds: Record<'both' | 'start' | 'end' | 'inside', string[]> = { both: [], start: [], end: [], inside: [] }
  for (const line of lines) {
    const literal = literalOf(line)
    if (literal === null) continue
    if (literal === undefined) return null
    const kind = literal.start ? (literal.end ? 'both' : 'start') : literal.end ? 'end' : 'inside'
    kinds[kind].push(escape(literal.text))
  }
  const parts = [
    ...(kinds.both.length > 0 ? [`^(?:${kinds.both.join('|')})$`] : []),
    ...(kinds.start.length > 0 ? [`^(?:${kinds.start.join('|')})`] : []),
    ...(kinds.end.length > 0 ? [`(?:${kinds.end.join('|')})$`] : []),
    ...(kinds.inside.length > 0 ? [kinds.inside.join('|')] : [])
  ]
  // A set of comments only has no rule: no segment passes.
  return new RegExp(parts.length > 0 ? parts.join('|') : '(?!)', 'i')
}
