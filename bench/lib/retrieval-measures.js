// What the retrieval bench measures a ranking by, and the two ripgrep baselines it is measured against.
import { execFileSync } from 'node:child_process'
import { rgPath } from '@vscode/ripgrep'
import { getEncoding } from 'js-tiktoken'

/** Deepest rank counted: MRR@10, hit@1, hit@5 look at the first ten distinct files. */
export const DEPTH = 10

const encoding = getEncoding('cl100k_base')
/** cl100k tokens of a text: what an agent pays to read it. */
export const tokensOf = (text) => encoding.encode(text).length

/** Words a question asks with that carry no subject (the baselines never pick them). */
const STOP = new Set(('the a an and or of to in on for from by with without into onto at as is are was be been it its this that these those ' +
  'what which who whom whose where when why how does do did done can could should would will may might must shall there their them they ' +
  'when then than so not no yes any all each every some more most less least other another such only own same too very just also about ' +
  'over under again once here both few up down out off above below between through during before after while until one two first last ' +
  'get gets set sets use used uses using make makes made find finds found code function functions file files kernel linux called call calls ' +
  'happen happens happening decide decides decided handle handles handled given give gives back new way ways thing things something').split(' '))

/** The words of a question a person would grep for: three letters or more, not a stop word, in order, once each. */
export function questionWords (question) {
  return [...new Set(question.toLowerCase().match(/[a-z0-9_]+/g) ?? [])].filter(w => w.length >= 3 && !STOP.has(w))
}

// The trees are copies under this repository, whose .gitignore leaves out every `dist/` (jose's and yaml's sources
// live in one): like the server, which reads no ignore file above its root, the baselines read none either.
const rg = (tree, args) => {
  try {
    return execFileSync(rgPath, ['--no-ignore-parent', ...args, '--', '.'], { cwd: tree, encoding: 'utf8', maxBuffer: 256 * 2 ** 20, stdio: ['ignore', 'pipe', 'ignore'] })
  } catch (err) {
    if (err.status === 1) return '' // no match
    throw err
  }
}
const relative = (line) => line.replace(/^\.\//, '')

/**
 * The question's most specific word, chosen without knowing the answer: the word (see questionWords) found in
 * the fewest files of the tree, case-insensitively as text; ties go to the longer word. Undefined when none is found.
 */
export function specificWord (tree, question) {
  let best
  for (const word of questionWords(question)) {
    const files = rg(tree, ['-l', '-i', '-F', word]).split('\n').filter(Boolean).length
    if (files === 0) continue
    if (best === undefined || files < best.files || (files === best.files && word.length > best.word.length)) best = { word, files }
  }
  return best?.word
}

/** Ripgrep's files for `word` by match count, most first (ties in path order), and the output an agent reads (`rg -c`). */
export function rgByCount (tree, word) {
  const output = rg(tree, ['-c', '-i', '-F', word])
  const rows = output.split('\n').filter(Boolean).map(line => {
    const at = line.lastIndexOf(':')
    return { path: relative(line.slice(0, at)), count: Number(line.slice(at + 1)) }
  })
  rows.sort((a, b) => b.count - a.count || (a.path < b.path ? -1 : 1))
  return { files: rows.map(r => r.path), text: rows.map(r => `${r.path}:${r.count}`).join('\n') }
}

/** Ripgrep's files for `word` in path order (`rg -l --sort path`), and that output. */
export function rgInPathOrder (tree, word) {
  const files = rg(tree, ['-l', '-i', '-F', '--sort', 'path', word]).split('\n').filter(Boolean).map(relative)
  return { files, text: files.join('\n') }
}

/** 1-based rank of the first of `files` (best first, repeats allowed) that answers, counting distinct files; undefined past DEPTH. */
export function rankOf (files, answers) {
  const seen = new Set()
  for (const file of files) {
    if (seen.has(file)) continue
    seen.add(file)
    if (seen.size > DEPTH) return undefined
    if (answers.has(file)) return seen.size
  }
  return undefined
}

/** MRR@10, hit@1, hit@5 of ranks (undefined: not in the first ten), and how many there were. */
export function summarize (ranks) {
  const n = ranks.length
  const at = (k) => ranks.filter(r => r !== undefined && r <= k).length
  const mrr = n === 0 ? 0 : ranks.reduce((sum, r) => sum + (r === undefined ? 0 : 1 / r), 0) / n
  return { n, mrr, hit1: at(1), hit5: at(5) }
}

/** The median of numbers, or undefined for none. */
export function median (values) {
  if (values.length === 0) return undefined
  const sorted = [...values].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[mid] : Math.round((sorted[mid - 1] + sorted[mid]) / 2)
}
