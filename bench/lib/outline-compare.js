// Our outlines against an oracle's functions, file by file: which of the oracle's functions we find, and whether
// the start (the line of the name), the end line and the owner agree. Every disagreement is kept with its place,
// by class, so a run shows what is left to look at.

/**
 * Our functions and methods of one file's outline, each with its owner's kind and the line that holds its name
 * (from the parser's definitions: the outline starts a definition at its head, the oracles at the name).
 */
export function ourFunctions (outline, definitions) {
  const nameLines = new Map(definitions.map(d => [`${d.name}:${d.start + 1}`, d.nameRow + 1]))
  const parents = []
  const functions = []
  for (const symbol of outline) {
    parents.length = symbol.depth - 1
    const owner = parents.at(-1)
    parents.push(symbol)
    if (symbol.kind !== 'function' && symbol.kind !== 'method') continue
    functions.push({ ...symbol, nameLine: nameLines.get(`${symbol.name}:${symbol.line}`) ?? symbol.line, ownerKind: owner?.kind })
  }
  return functions
}

/** The figures of one language: counts, and up to `keep` examples of each kind of disagreement. */
export function createTally (keep = Number(process.env.BENCH_OUTLINE_EXAMPLES ?? 12)) {
  const tally = { files: 0, oracle: 0, misread: 0, endless: 0, ours: 0, found: 0, start: 0, end: 0, ends: 0, owner: 0, ownedByFunction: 0, examples: {} }
  const note = (kind, text) => {
    const list = (tally.examples[kind] ??= { count: 0, shown: [] })
    list.count++
    if (list.shown.length < keep) list.shown.push(text)
  }
  /**
   * Where the oracle is the one that is wrong, for a function of its that is not ours: the kind, or undefined. Only
   * two shapes, each checked against one of our functions ending where the oracle's does.
   */
  const misreading = (tag, ours, lines) => {
    if (tag.end === undefined) return undefined
    // One macro invocation and nothing else (comments aside; over lines while its parentheses are open; maybe after
    // `static`) — `NOKPROBE_SYMBOL(f)`, `static DEF_SCSI_QCMD(q)`, `SEC("kprobe/" SYSCALL(sys_getuid))` — naming the
    // oracle's function, whose end is that of one of our functions starting after it.
    let text = ''
    for (let k = tag.line - 1; k < Math.min(lines.length, tag.line + 8); k++) {
      text += (lines[k] ?? '').replace(/\/\*.*?\*\/|\/\/.*$/g, '') + '\n'
      if ((text.match(/\(/g) ?? []).length <= (text.match(/\)/g) ?? []).length) break
    }
    const alone = /^\s*(?:static\s+)?[A-Za-z_]\w*\s*\([^;]*\)\s*$/.test(text) && new RegExp(`\\b${tag.name.replace(/\$/g, '\\$')}\\s*\\(`).test(text)
    if (alone && ours.some(f => f.line > tag.line && f.endLine === tag.end)) {
      return 'oracle misreads: a macro invocation of its own taken as the head of the function after it'
    }
    // An annotation macro of our function's head taken for its name: `bool __init __attribute((weak))
    // arch_hugetlb_valid_size(…)` is `__init` to ctags 5.9, `static void __acquires(q)\nstop_queue(…)` is `__acquires`.
    const annotation = (f) => {
      const head = lines.slice(f.line - 1, f.nameLine).join('\n')
      return tag.name.startsWith('__') && f.line <= tag.line && tag.line <= f.nameLine && head.indexOf(tag.name) !== -1 && head.indexOf(tag.name) < head.lastIndexOf(f.name)
    }
    if (ours.some(f => f.endLine === tag.end && annotation(f))) return 'oracle misreads: an annotation macro taken for the name'
    return undefined
  }
  /** Adds one file: the oracle's functions in it, ours, and its lines. */
  tally.add = (file, oracle, ours, lines) => {
    tally.files++
    tally.oracle += oracle.length
    tally.ours += ours.length
    for (const f of ours) {
      if (f.ownerKind === 'function' || f.ownerKind === 'method') {
        tally.ownedByFunction++
        note('ours owned by a function', `${file}:${f.line}-${f.endLine} ${f.container}.${f.name}`)
      }
    }
    const taken = new Set()
    for (const tag of oracle) {
      // The same name may be defined twice in a file (#ifdef branches): the nearest unclaimed one is the match.
      let best
      for (const f of ours) {
        // ctags names a function a macro names by the macro: `BTREE_FN(init)(…)` (ours `BTREE_FN(init)`),
        // `PROG(PARSE_IP)(struct __sk_buff *skb)` (ours PARSE_IP) — the same function.
        const byMacro = f.name.startsWith(`${tag.name}(`) || (lines[tag.line - 1] ?? '').includes(`${tag.name}(${f.name})`)
        if ((f.name !== tag.name && !byMacro) || taken.has(f)) continue
        const distance = tag.line >= f.line && tag.line <= f.nameLine ? 0 : Math.min(Math.abs(tag.line - f.line), Math.abs(tag.line - f.nameLine))
        if (distance <= 3 && (best === undefined || distance < best.distance)) best = { f, distance }
      }
      if (best === undefined) {
        const misread = misreading(tag, ours, lines)
        if (misread !== undefined) tally.misread++
        else if (tag.end === undefined) tally.endless++
        note(misread ?? 'not found', `${file}:${tag.line}${tag.end === undefined ? '' : `-${tag.end}`} ${tag.name}`)
        continue
      }
      const f = best.f
      taken.add(f)
      tally.found++
      if (f.nameLine === tag.line) tally.start++
      else note('start differs', `${file}:${tag.line} ${tag.name}: ours ${f.nameLine}`)
      if (tag.end === undefined) tally.endless++
      else {
        tally.ends++
        if (f.endLine === tag.end) tally.end++
        else note(f.endLine > tag.end ? 'ends later' : 'ends earlier', `${file}:${tag.line} ${tag.name}: oracle ${tag.line}-${tag.end}, ours ${f.line}-${f.endLine}`)
      }
      if ((tag.scope ?? '') === (f.container ?? '')) tally.owner++
      else note('owner differs', `${file}:${tag.line} ${tag.name}: oracle ${tag.scope ?? '(none)'}, ours ${f.container ?? '(none)'}`)
    }
  }
  return tally
}

const percent = (part, whole) => whole === 0 ? '—' : `${(100 * part / whole).toFixed(2)} %`
const count = (n) => n.toLocaleString('en-US')

/** The section's table header. */
export const TALLY_HEADER = [
  '| corpus | oracle | files | oracle\'s functions | misread by the oracle | found | same start | same end | same owner | ours owned by a function |',
  '|---|---|---|---|---|---|---|---|---|---|'
]

/** One language's figures as a line of the table: shares of the functions the oracle reads right (all of them in brackets). */
export function tallyRow (label, oracleName, tally) {
  const right = tally.oracle - tally.misread
  const share = (n) => `${percent(n, right)} (${percent(n, tally.oracle)})`
  // An end is compared only where the oracle gives one (ctags gives none for a Python lambda).
  const ends = tally.ends === 0 ? 'n/a (no end lines)' : `${percent(tally.end, right - tally.endless)} (${percent(tally.end, tally.oracle - tally.endless)})`
  return `| ${label} | ${oracleName} | ${count(tally.files)} | ${count(tally.oracle)} | ${count(tally.misread)} | ${share(tally.found)} | ${share(tally.start)} | ${ends} | ${share(tally.owner)} | ${count(tally.ownedByFunction)} |`
}

/** The disagreements of one language, by class, with examples. */
export function tallyExamples (label, oracleName, tally) {
  const classes = Object.entries(tally.examples).sort((a, b) => b[1].count - a[1].count)
  if (classes.length === 0) return `**${label} against ${oracleName}**: no disagreement.`
  return [`**${label} against ${oracleName}**`, '', ...classes.flatMap(([kind, { count, shown }]) => [`- ${kind}: ${count}`, ...shown.map(s => `  - \`${s}\``)])].join('\n')
}
