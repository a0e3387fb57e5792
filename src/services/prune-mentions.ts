/**
 * Prose without what it says about names it must not mention (tools this server does not serve): a
 * parenthesis or an `e.g. …` tail that names one goes, else its clause (`;`, `, or`), else its sentence, else
 * its line. Quoted text (`"…"`, backticks) and brackets are never cut inside, so a call such as
 * `read_files files=[{"path":"a. b"}]` stays whole. Only prose the server writes goes through here, never a
 * file's content.
 */

/** A snake_case word that is not part of a path or a file name (`src/git_log.ts` names no tool). */
const WORD = /(?<![\w/.-])[a-z][a-z0-9]*(?:_[a-z0-9]+)+(?![\w/-]|\.\w)/g

/** True when `text` names one of `names`. */
export function mentionsAny (text: string, names: ReadonlySet<string>): boolean {
  for (const word of text.match(WORD) ?? []) if (names.has(word)) return true
  return false
}

const OPEN = '([{'
const CLOSE = ')]}'
const QUOTES = '"`'

/** A piece of text and the separator that ended it ('' for the last). */
interface Piece { text: string, sep: string }

/** Walks `text` outside quotes, tracking bracket depth; `visit` returns how many characters it consumed as a separator. */
function walk (text: string, visit: (i: number, depth: number, c: string) => number): void {
  let quote = ''
  let depth = 0
  for (let i = 0; i < text.length; i++) {
    const c = text[i]
    if (quote !== '') {
      if (c === quote) quote = ''
      continue
    }
    const consumed = visit(i, depth, c)
    if (consumed > 0) i += consumed - 1
    else if (QUOTES.includes(c)) quote = c
    else if (OPEN.includes(c)) depth++
    else if (CLOSE.includes(c) && depth > 0) depth--
  }
}

/** Splits `text` where `at` gives a separator's length, at the top level only (outside quotes and brackets). */
function split (text: string, at: (text: string, i: number) => number): Piece[] {
  const pieces: Piece[] = []
  let start = 0
  walk(text, (i, depth) => {
    const length = depth === 0 ? at(text, i) : 0
    if (length > 0) {
      pieces.push({ text: text.slice(start, i), sep: text.slice(i, i + length) })
      start = i + length
    }
    return length
  })
  pieces.push({ text: text.slice(start), sep: '' })
  return pieces
}

/** The top-level parentheses of `text` (outside quotes), as [open, close] indexes. */
function parentheses (text: string): Array<[number, number]> {
  const found: Array<[number, number]> = []
  let open = -1
  walk(text, (i, depth, c) => {
    if (depth === 0 && c === '(') open = i
    else if (depth === 1 && c === ')' && open !== -1) found.push([open, i])
    return 0
  })
  return found
}

/** A sentence ends at `.`, `!` or `?` and the spaces after it, but not in `e.g.` or `i.e.`. */
function sentenceEnd (text: string, i: number): number {
  if (!'.!?'.includes(text[i]) || text[i + 1] !== ' ' || /(?:^|\W)(?:e\.g|i\.e)$/.test(text.slice(Math.max(0, i - 4), i))) return 0
  return 1 + (/^ +/.exec(text.slice(i + 1)) as RegExpExecArray)[0].length
}

/** A clause ends at `; ` or `, or `. */
const clauseEnd = (text: string, i: number): number => text.startsWith('; ', i) ? 2 : text.startsWith(', or ', i) ? 5 : 0

/** The clause without each parenthesis that names one of `names`, then without an `e.g.` tail when only the tail does. */
function trimClause (clause: string, names: ReadonlySet<string>): string {
  let kept = clause
  for (const [open, close] of parentheses(clause).reverse()) {
    if (mentionsAny(kept.slice(open, close + 1), names)) kept = kept.slice(0, open).replace(/ $/, '') + kept.slice(close + 1)
  }
  const example = /,? e\.g\. /.exec(kept)
  if (example !== null && mentionsAny(kept.slice(example.index), names) && !mentionsAny(kept.slice(0, example.index), names)) kept = kept.slice(0, example.index)
  return kept
}

/** One sentence (without its end mark) less the clauses that name one of `names`; '' when none is left. */
function pruneSentence (sentence: string, names: ReadonlySet<string>): string {
  const kept: string[] = []
  let sep = ''
  for (const clause of split(sentence, clauseEnd)) {
    const text = trimClause(clause.text, names)
    if (text.trim() !== '' && !mentionsAny(text, names)) kept.push(kept.length === 0 ? text : sep + text)
    sep = clause.sep
  }
  return kept.join('')
}

/** One line of prose less what it says of `names`; '' when nothing is left. */
function pruneLine (line: string, names: ReadonlySet<string>): string {
  if (!mentionsAny(line, names)) return line
  const indent = (/^\s*(?:[-*] )?/.exec(line) as RegExpExecArray)[0]
  const kept: string[] = []
  for (const sentence of split(line.slice(indent.length), sentenceEnd)) {
    const mark = sentence.sep === '' ? (/[.!?]$/.exec(sentence.text)?.[0] ?? '') : sentence.sep.trimEnd()
    const text = pruneSentence(sentence.sep === '' ? sentence.text.slice(0, sentence.text.length - mark.length) : sentence.text, names)
    if (text !== '') kept.push(text + mark)
  }
  return kept.length === 0 ? '' : indent + kept.join(' ')
}

/** `text` (prose, one or more lines) less what it says of `names`; the same string when it names none of them. */
export function pruneMentions (text: string, names: ReadonlySet<string>): string {
  if (names.size === 0 || !mentionsAny(text, names)) return text
  const lines: string[] = []
  for (const line of text.split('\n')) {
    const kept = pruneLine(line, names)
    // A line of mentions only goes; so does a blank line that would now double another or lead the text.
    if (kept === '' && (line.trim() !== '' || lines.length === 0 || lines[lines.length - 1] === '')) continue
    lines.push(kept)
  }
  while (lines[lines.length - 1] === '') lines.pop()
  return lines.join('\n')
}

/** Each line less what it says of `names`, without the lines left empty (an answer's own prose, never file content). */
export function pruneLines (lines: readonly string[], names: ReadonlySet<string>): string[] {
  return lines.map(line => pruneMentions(line, names)).filter(line => line !== '')
}
