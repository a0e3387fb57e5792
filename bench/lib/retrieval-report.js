// The retrieval bench's figures: goal rows for bench/run.js's table (held-out questions: all sets together, each set,
// the reworded ones) and Markdown tables per split (held out, tuning), per set and per kind of question, plus every
// question's ranks.
import { KINDS } from './hold-out.js'
import { median, summarize } from './retrieval-measures.js'

/** The methods in the order they are reported, with their names in the tables. */
const METHODS = [
  ['code', 'search_code (BM25)'],
  ['semantic', 'search_semantic (fusion)'],
  ['vectors', 'vectors alone'],
  ['rgCount', 'ripgrep files by match count, most specific word'],
  ['rgPath', 'ripgrep files in path order, most specific word']
]

/** The groups a set's questions are reported in: all of them, each kind, and those sharing no word with their answer. */
const GROUPS = [
  ['all', () => true],
  ...KINDS.map(kind => [kind, (r) => r.kind === kind]),
  ['no shared word', (r) => r.noSharedWord === true]
]

const SPLITS = [{ name: 'held-out (never tuned on)', held: true }, { name: 'tuning', held: false }]

const fixed = (n) => n.toFixed(2)
const figures = (records, method) => {
  const s = summarize(records.map(r => r[method].rank))
  return { ...s, text: `MRR@10 ${fixed(s.mrr)}, hit@1 ${s.hit1}/${s.n}, hit@5 ${s.hit5}/${s.n}` }
}

/** Questions on which fusion ranks the answer below the better of its two inputs (not found counts as rank 11). */
export function fusionLosses (records, depth) {
  const rank = (r) => r ?? depth + 1
  return records.filter(r => rank(r.semantic.rank) > Math.min(rank(r.code.rank), rank(r.vectors.rank)))
}

/** One table: a row per method with MRR@10, hit@1, hit@5, and the median tokens read until the answer showed. */
function methodTable (records) {
  const lines = ['| Method | MRR@10 | hit@1 | hit@5 | answer in first 10 files | median tokens read to the answer |', '|---|---|---|---|---|---|']
  for (const [key, name] of METHODS) {
    const s = summarize(records.map(r => r[key].rank))
    const found = records.filter(r => r[key].rank !== undefined).length
    const tokens = median(records.map(r => r[key].tokens).filter(t => t !== undefined))
    lines.push(`| ${name} | ${fixed(s.mrr)} | ${s.hit1}/${s.n} | ${s.hit5}/${s.n} | ${found}/${s.n} | ${tokens ?? '—'} |`)
  }
  return lines.join('\n')
}

/** MRR@10 of every method for each set (then all sets) and each group of its questions: one row per set and group. */
function kindTable (results, records) {
  const lines = [`| Set | Questions | n | ${METHODS.map(([, name]) => name.replace(/, most specific word$/, '')).join(' | ')} |`, `|---|---|---|${METHODS.map(() => '---').join('|')}|`]
  const sets = [...results.map(r => [r.name, records.filter(x => x.set === r.name)]), ['all sets', records]]
  for (const [name, own] of sets) {
    for (const [group, keep] of GROUPS) {
      const chosen = own.filter(keep)
      const cells = METHODS.map(([key]) => chosen.length === 0 ? '—' : fixed(summarize(chosen.map(r => r[key].rank)).mrr))
      lines.push(`| ${name} | ${group} | ${chosen.length} | ${cells.join(' | ')} |`)
    }
  }
  return lines.join('\n')
}

/** A goal row of bench/run.js's table for `records`: `method` at `min` MRR@10 or more, and above ripgrep by count. */
function goalRow (name, records, method, min) {
  const measured = figures(records, method)
  const baseline = figures(records, 'rgCount')
  return { name, measured: measured.text, baseline: `ripgrep by count ${baseline.text}`, ratio: undefined, goal: `MRR@10 ≥ ${min} and above ripgrep by count`, pass: measured.n > 0 && measured.mrr >= min && measured.mrr > baseline.mrr }
}

/**
 * The section's rows and its Markdown. `results`: one per set, with its records. Goals are judged on the held-out
 * questions — or, when only the tuning ones were asked (`split` 'tuning'), on those, each row saying so. `label`
 * names another build measured (BENCH_RETRIEVAL_BIN).
 */
export function retrievalReport (results, provider, depth, { split = 'all', label } = {}) {
  const all = results.flatMap(r => r.records)
  const tuningOnly = split === 'tuning'
  const judged = all.filter(r => r.heldOut !== tuningOnly)
  const which = tuningOnly ? 'tuning' : 'held-out'
  const losses = fusionLosses(judged, depth)
  const lossShare = judged.length === 0 ? 0 : losses.length / judged.length
  const build = label === undefined ? '' : ` [${label}]`
  const where = `${judged.length} ${which} questions over ${results.map(r => r.tree).join(', ')}${build}`
  const reworded = judged.filter(r => r.kind === 'reworded')
  const rows = [
    goalRow(`retrieval, search_code, ${where}`, judged, 'code', 0.75),
    goalRow(`retrieval, search_semantic (${provider.name}), ${where}`, judged, 'semantic', 0.8),
    { name: `retrieval, fusion below the better of BM25 and vectors, ${where}`, measured: `${losses.length}/${judged.length} (${Math.round(lossShare * 100)} %)`, baseline: '—', ratio: undefined, goal: '≤ 10 % of the questions', pass: lossShare <= 0.1, note: losses.map(r => r.id).join(', ') },
    ...results.flatMap(r => {
      const own = r.records.filter(x => x.heldOut !== tuningOnly)
      const of = `${own.length} ${which} questions of ${r.name} (${r.tree})${build}`
      return [goalRow(`retrieval, search_code, ${of}`, own, 'code', 0.75), goalRow(`retrieval, search_semantic, ${of}`, own, 'semantic', 0.8)]
    }),
    goalRow(`retrieval, search_semantic, ${reworded.length} ${which} questions worded without the code's words, all sets${build}`, reworded, 'semantic', 0.5)
  ]
  const parts = [`## Retrieval: the right file first (${provider.name})${build}`, '',
    ...(tuningOnly ? ['Only the tuning questions were asked (BENCH_RETRIEVAL_SPLIT=tuning): the held-out ones are not in this report.', ''] : []),
    'Rank = place of the first answer file among the distinct files a method shows, best first (search tools: up to 3 pages of 10 chunks). ' +
    '"Most specific word" = the question\'s word found in the fewest files (chosen without knowing the answer). ' +
    'Tokens: cl100k tokens of the pages read until the answer showed (ripgrep: its whole output). ' +
    'Kinds: "where" asks where something is done, "how" how something is handled, both in the code\'s own words; "reworded" asks either without them, ' +
    'as someone who does not know the vocabulary would. "No shared word": no word of the question, read by the index\'s tokenizer (stop words dropped, ' +
    'identifiers split, stemmed, abbreviations joined; no synonyms), is a word of any answer\'s symbol name or file path.', '']
  for (const split of SPLITS.filter(s => !tuningOnly || !s.held)) {
    const records = all.filter(r => r.heldOut === split.held)
    parts.push(`### ${split.name}: ${records.length} questions, all sets`, '', methodTable(records), '',
      `#### ${split.name}, MRR@10 by set and kind of question`, '', kindTable(results, records), '')
    for (const result of results) {
      const own = result.records.filter(r => r.heldOut === split.held)
      const note = result.note === undefined ? '' : `; ${result.note}`
      parts.push(`#### ${split.name}, ${result.name}: ${result.tree} (${result.folders.length} folders: ${result.files} files, ${result.chunks} chunks, ${result.vectors} vectors${note})`, '', methodTable(own), '')
    }
  }
  parts.push('### Every question: rank of the answer per method (— = not in the first 10 files)', '',
    '| Question | kind | no shared word | held out | search_code | search_semantic | vectors | rg by count | rg path order | word |', '|---|---|---|---|---|---|---|---|---|---|')
  for (const r of all) {
    const cell = (m) => r[m].rank ?? '—'
    parts.push(`| ${r.id} | ${r.kind} | ${r.noSharedWord ? 'yes' : ''} | ${r.heldOut ? 'yes' : ''} | ${cell('code')} | ${cell('semantic')} | ${cell('vectors')} | ${cell('rgCount')} | ${cell('rgPath')} | ${r.word ?? '—'} |`)
  }
  return { rows, markdown: parts.join('\n') }
}
