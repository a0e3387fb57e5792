// One pass over C source, as the preprocessor and ctags see it (comments, strings, directives, braces), before
// tree-sitter parses it. It finds the top-level braces — the extents the outline is checked against — and rewrites
// what the grammar cannot read, without moving any character (same length, same line breaks):
// - annotation macros (`__init`, `__printf(1, 2)`) become spaces: they carry no name and break the head's shape;
// - comments inside a directive become spaces: the grammar ends a `#define` at one followed by a `\` (pktgen.c's
//   list of pf(X) flags) or by more of the value (`#define REG (0x07F8 /*| OFFSET*/)`);
// - a statement macro in a function body (`for_each_cpu(cpu) stmt;`, `list_for_each_entry(…) {`) gets a `;` in the
//   blank after its `)`: read as a function head, it swallows the rest of the file;
// - a `do { … } while_each_thread(…);` loses its `do`, which the grammar closes only with `while`.

import { blankBetween, closeOnLine, continues, isComment, isSpace, isWord, isWordStart, nextCode, nextToken, skipComment, skipQuoted } from './c-tokens.js'

/** What the scan found. Offsets are string indices. */
export interface CSource {
  /** The text to parse. */
  text: string
  /** Top-level `{` offsets in order, each with its `}` (-1: never closed) and whether a `)` precedes it (a body). */
  opens: number[]
  closes: number[]
  afterParen: boolean[]
  /** `[from, to)` pairs: the branches of `#if 0`, whose braces are not counted (ctags skips them too). */
  skipped: number[]
  /** `[from, to)` pairs: top-level macro invocations without their `;`, each followed by a line of its own. */
  loose: number[]
  /** `[head, open]` pairs: an old-style function (`f(a, b)\nint a, *b;\n{`): where its head starts, its body's `{`. */
  oldStyle: number[]
  /** Offsets of the `;` outside any brace or parenthesis: a function's head never holds one. */
  semicolons: number[]
}

const ANNOTATION_WORDS = new Set(('__always_inline __init __exit __cold __hot __weak __must_check __malloc __pure __maybe_unused __always_unused __used ' +
  '__noreturn noinline notrace noinstr asmlinkage __visible __ref __sched __latent_entropy __randomize_layout __packed __user __iomem ' +
  '__percpu __rcu __force __kprobes __flatten __ro_after_init __read_mostly __initdata __initconst __meminit __nocfi __attribute_const__ ' +
  '__no_sanitize_address __no_kcsan __cpuidle __irq_entry __softirq_entry __net_init __net_exit __devinit __refdata __init_or_module').split(' '))
const ANNOTATION_CALLS = new Set(('__alloc_size __printf __scanf __section __aligned __assume_aligned __attribute__ __attribute __diagnose_as ' +
  '__counted_by __must_hold __acquires __releases __cond_lock __nonstring __realloc_size __malloc_like').split(' '))
/** Words that open a parenthesis but never a statement macro. */
const NOT_MACROS = new Set(['if', 'for', 'while', 'switch', 'return', 'sizeof', 'typeof', '__typeof__', '__typeof', 'asm', '__asm__', '__asm', 'case', '_Static_assert', 'static_assert', '_Generic', 'defined'])
const CONTROL = new Set(['if', 'for', 'while', 'switch'])

// `prev`, the last significant token: a character code, or one of these.
const NONE = -1
const WORD = -2
/** The `)` closing a control condition or a statement macro's arguments: a statement follows. */
const STATEMENT = -3

/** An `#if` group: the state at its start, and at the end of its first branch; `zero`: an `#if 0` being passed over;
 * `only`: its other branches passed over (blank to the grammar too); `inert`: inside a branch passed over. */
interface Frame { depth: number, block: number, firstDepth: number, firstBlock: number, zero: boolean, only: boolean, inert: boolean }

/** Scans C source (`statements`: also rewrite statement macros and `do` — C; C++ gets the annotations and comments only). */
export function scanC (s: string, statements = true): CSource {
  const opens: number[] = []
  const closes: number[] = []
  const afterParen: boolean[] = []
  const skipped: number[] = []
  const loose: number[] = []
  const semicolons: number[] = []
  const oldStyle: number[] = []
  // Rewrites as [from, to, what] triples: what 0 blanks the span, 1 puts a `;` at `from`.
  const edits: number[] = []
  const frames: Frame[] = []
  const parens: number[] = []
  const dos: number[] = []
  let depth = 0
  let block = -1
  let prev = NONE
  let wordStart = 0
  let wordEnd = 0
  // Where the last word stood: first in a statement of a function body, or first at the top level.
  let wordAtStatement = false
  let wordAtTop = false
  // Where the top-level unit the last word stands in begins: the word, or a `static` before it.
  let unitFrom = 0
  let lineStart = true
  let skipping = false
  let skipFrom = 0
  // A top-level declaration or head has begun and not yet ended (with its `;`, its body's `}`, or its line).
  let pending = false
  let i = 0
  const n = s.length
  const prevWordIs = (word: string): boolean => prev === WORD && wordEnd - wordStart === word.length && s.startsWith(word, wordStart)
  const inBody = (): boolean => statements && depth > 0 && afterParen[block]

  /** Handles the directive at `i` (its `#`); returns the end of its logical line. */
  const directive = (): number => {
    let k = i + 1
    while (isSpace(s.charCodeAt(k))) k++
    const nameFrom = k
    while (isWord(s.charCodeAt(k))) k++
    const name = s.slice(nameFrom, k)
    const bodyFrom = k
    while (k < n) {
      const c = s.charCodeAt(k)
      if (c === 10) {
        if (!continues(s, k)) break
        k++
      } else if (isComment(s, k)) {
        const end = skipComment(s, k)
        if (s.charCodeAt(k + 1) === 42 && !skipping) edits.push(k, end, 0)
        k = end
      } else if (c === 34 || c === 39) k = skipQuoted(s, k, c)
      else k++
    }
    if (name === 'if' || name === 'ifdef' || name === 'ifndef') {
      const zero = name === 'if' && /^\s*0\s*(\/[*/].*)?$/s.test(s.slice(bodyFrom, k))
      frames.push({ depth, block, firstDepth: -1, firstBlock: -1, zero: zero && !skipping, only: false, inert: skipping })
      if (zero && !skipping) {
        skipping = true
        skipFrom = i
      }
    } else if (name === 'else' || name.startsWith('elif')) {
      const frame = frames.at(-1)
      if (frame !== undefined && !frame.inert) {
        if (frame.zero) {
          // The branch after `#if 0` is the one counted, as if it came first.
          frame.zero = false
          skipping = false
          skipped.push(skipFrom, i)
        } else if (frame.only) {
          // Already passing over the other branches.
        } else if (frame.firstDepth === -1 && depth === 0 && frame.depth === 0 && pending) {
          // A head or declaration the first branch left open (`static u32 LowerWordSwap(u32 x)\n#else\nstatic u32
          // UpperWordSwap(u32 x)\n#endif\n{`): ctags reads the first branch alone, and so shall the grammar.
          frame.only = true
          skipping = true
          skipFrom = i
        } else {
          if (frame.firstDepth === -1) {
            frame.firstDepth = depth
            frame.firstBlock = block
          }
          // Every branch starts where the first did; the braces counted are the first branch's.
          depth = frame.depth
          block = frame.block
        }
      }
    } else if (name === 'endif') {
      const frame = frames.pop()
      if (frame !== undefined && !frame.inert) {
        if (frame.zero || frame.only) {
          skipping = false
          skipped.push(skipFrom, k)
          if (frame.only) edits.push(skipFrom, i, 0)
        } else if (frame.firstDepth !== -1) {
          depth = frame.firstDepth
          block = frame.firstBlock
        }
      }
    }
    return k
  }

  while (i < n) {
    const c = s.charCodeAt(i)
    if (c === 10) {
      lineStart = true
      i++
      continue
    }
    if (isSpace(c)) {
      i++
      continue
    }
    if (c === 35 && lineStart) {
      i = directive()
      continue
    }
    lineStart = false
    if (isComment(s, i)) {
      i = skipComment(s, i)
      continue
    }
    if (depth === 0 && !skipping) pending = true
    if (c === 34 || c === 39) {
      i = skipQuoted(s, i, c)
      prev = c
      continue
    }
    if (skipping) {
      i++
      continue
    }
    if (isWord(c)) {
      let j = i + 1
      while (j < n && isWord(s.charCodeAt(j))) j++
      if (!isWordStart(c)) {
        prev = 48
        i = j
        continue
      }
      const length = j - i
      // Annotations start with `__` or are one of four words; only those are looked up.
      if (length > 4 && ((c === 95 && s.charCodeAt(i + 1) === 95) || c === 110 || c === 97)) {
        const word = s.slice(i, j)
        if (ANNOTATION_WORDS.has(word)) {
          edits.push(i, j, 0)
          i = j
          continue
        }
        if (ANNOTATION_CALLS.has(word)) {
          let k = j
          while (isSpace(s.charCodeAt(k))) k++
          const close = s.charCodeAt(k) === 40 ? closeOnLine(s, k) : -1
          if (close !== -1) {
            edits.push(i, close + 1, 0)
            i = close + 1
            continue
          }
        }
      }
      if (c === 100 && length === 2 && s.charCodeAt(i + 1) === 111 && inBody()) {
        // `do {`: its `}` is checked for the `while` that must follow.
        const k = nextToken(s, j)
        if (k !== -1 && s.charCodeAt(k) === 123) dos.push(i, depth + 1)
      }
      wordAtStatement = atStatement()
      // `static DEF_SCSI_QCMD(name)`: a macro invocation after a storage class is first in its unit too.
      const afterStatic: boolean = wordAtTop && prevWordIs('static')
      wordAtTop = atTopLevel() || afterStatic
      if (!afterStatic) unitFrom = i
      wordStart = i
      wordEnd = j
      prev = WORD
      i = j
      continue
    }
    switch (c) {
      case 40: {
        // What a `(` opens: a control condition (1), a statement macro's arguments (2), a top-level one's (3), else 0.
        let kind = 0
        if (prev === WORD && (wordAtStatement || wordAtTop || wordEnd - wordStart <= 6) && nothingBetween(s, wordEnd, i)) {
          const word = s.slice(wordStart, wordEnd)
          if (CONTROL.has(word)) kind = 1
          else if (!NOT_MACROS.has(word)) kind = wordAtStatement ? 2 : wordAtTop ? 3 : 0
        }
        parens.push(kind, kind === 3 ? unitFrom : wordStart)
        prev = c
        break
      }
      case 41: {
        const from = parens.pop() ?? 0
        const kind = parens.pop() ?? 0
        prev = c
        if (kind === 1) prev = STATEMENT
        else if (kind === 2) {
          const k = nextToken(s, i + 1)
          const next = k === -1 ? -1 : s.charCodeAt(k)
          if (next === 123 || isWordStart(next)) {
            const slot = blankBetween(s, i + 1, k)
            if (slot !== -1) {
              edits.push(slot, slot + 1, 1)
              prev = STATEMENT
            }
          }
        } else if (kind === 3) {
          // Loose when the next line starts something else; not when a `{` comes (a body), nor across `#else` (one
          // of several heads: `#ifdef A\nSYSCALL_DEFINE5(clone, …)\n#else\nSYSCALL_DEFINE5(clone, …)\n#endif\n{`),
          // nor when declarations of its arguments come (an old-style head: `f(a, b)\nint a, *b;\n{`).
          const { at: k, alternative } = nextCode(s, i + 1)
          const body = oldStyleBody(s, from, i)
          if (body !== -1) oldStyle.push(from, body)
          else if (k !== -1 && isWordStart(s.charCodeAt(k)) && !alternative && s.lastIndexOf('\n', k) > i) {
            loose.push(from, i + 1)
            // As if its `;` were there: the next line starts afresh.
            prev = 59
            pending = false
          }
        }
        break
      }
      case 123:
        // `extern "C" {` (a header's guard for C++) holds top-level declarations: not a block, and its `}` is then
        // a stray one, passed over.
        if (depth === 0 && prev === 34 && /\bextern\s*"C"\s*$/.test(s.slice(Math.max(0, i - 20), i))) {
          prev = c
          break
        }
        if (depth === 0) {
          block = opens.length
          opens.push(i)
          closes.push(-1)
          // An old-style head ends in declarations, not in its `)`: still a body.
          afterParen.push(prev === 41 || oldStyle.at(-1) === i)
        }
        depth++
        prev = c
        break
      case 125:
        prev = c
        if (depth === 0) break
        depth--
        if (depth === 0) pending = false
        if (depth === 0 && closes[block] === -1) closes[block] = i
        if (dos.length > 0 && dos[dos.length - 1] === depth + 1) {
          dos.pop()
          const at = dos.pop() as number
          const k = nextToken(s, i + 1)
          if (k !== -1 && isWordStart(s.charCodeAt(k)) && !(s.startsWith('while', k) && !isWord(s.charCodeAt(k + 5)))) edits.push(at, at + 2, 0)
        }
        break
      case 59:
        if (depth === 0) pending = false
        if (depth === 0 && parens.length === 0) semicolons.push(i)
        prev = c
        break
      default:
        prev = c
    }
    i++
  }
  return { text: edits.length === 0 ? s : applyEdits(s, edits), opens, closes, afterParen, skipped, loose, semicolons, oldStyle }

  function atStatement (): boolean {
    return inBody() && (prev === 59 || prev === 123 || prev === 125 || prev === 58 || prev === STATEMENT || prevWordIs('else') || prevWordIs('do'))
  }
  function atTopLevel (): boolean {
    return depth === 0 && (prev === 59 || prev === 125 || prev === NONE)
  }
}

/**
 * The `{` of the old-style function whose head runs from `from` to its `)` at `close`, or -1: its arguments are names
 * only, and what follows up to the next `{` is declarations (`;`-ended, no parenthesis, brace, directive or `=`).
 */
function oldStyleBody (s: string, from: number, close: number): number {
  const args = s.slice(s.indexOf('(', from) + 1, close)
  if (!/^\s*[A-Za-z_$][\w$]*(?:\s*,\s*[A-Za-z_$][\w$]*)*\s*$/.test(args)) return -1
  const open = s.indexOf('{', close)
  if (open === -1 || open - close > 2000) return -1
  const declarations = s.slice(close + 1, open).replace(/\/\*[^]*?\*\/|\/\/[^\n]*/g, ' ').trim()
  return declarations.endsWith(';') && !/[(){}#=]/.test(declarations) ? open : -1
}

/** Only blanks between a word and its `(`. */
function nothingBetween (s: string, from: number, to: number): boolean {
  for (let k = from; k < to; k++) if (!isSpace(s.charCodeAt(k))) return false
  return true
}

/** Applies the rewrites (one inside another is passed over): spaces for every character but line breaks, or a `;`. */
function applyEdits (s: string, edits: number[]): string {
  const order = Array.from({ length: edits.length / 3 }, (_, k) => k * 3).sort((a, b) => edits[a] - edits[b])
  const parts: string[] = []
  let at = 0
  for (const e of order) {
    const from = edits[e]
    const to = edits[e + 1]
    // A comment of an `#else` line, inside the branches passed over.
    if (from < at) continue
    parts.push(s.slice(at, from), edits[e + 2] === 1 ? ';' : s.slice(from, to).replace(/[^\r\n]/g, ' '))
    at = to
  }
  parts.push(s.slice(at))
  return parts.join('')
}
