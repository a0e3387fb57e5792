// The retrieval bench's figures: goal rows for bench/run.js's table (held-out questions) and Markdown tables
// per tree and split, per method, plus every question's ranks.
import { median, summarize } from './retrieval-measures.js'

/** The methods in the order they are reported, with their names in the tables. */
const METHODS = [
  ['code', 'search_code (BM25)'],
  ['semantic', 'search_semantic (fusion)'],
  ['vectors', 'vectors alone'],
  ['rgCount', 'ripgrep files by match count, most specific word'],
  ['rgPath', 'ripgrep files in path order, most specific word']
]

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

/** The section's rows (goals judged on the held-out questions of every tree together) and its Markdown. */
export function retrievalReport (results, provider, depth) {
  const all = results.flatMap(r => r.records)
  const heldOut = all.filter(r => r.heldOut)
  const code = figures(heldOut, 'code')
  const semantic = figures(heldOut, 'semantic')
  const baseline = figures(heldOut, 'rgCount')
  const losses = fusionLosses(heldOut, depth)
  const lossShare = heldOut.length === 0 ? 0 : losses.length / heldOut.length
  const where = `${heldOut.length} held-out questions over ${results.map(r => r.tree).join(' and ')}`
  const rows = [
    { name: `retrieval, search_code, ${where}`, measured: code.text, baseline: `ripgrep by count ${baseline.text}`, ratio: undefined, goal: 'MRR@10 ≥ 0.75 and above ripgrep by count', pass: code.mrr >= 0.75 && code.mrr > baseline.mrr },
    { name: `retrieval, search_semantic (${provider.name}), ${where}`, measured: semantic.text, baseline: `ripgrep by count ${baseline.text}`, ratio: undefined, goal: 'MRR@10 ≥ 0.8 and above ripgrep by count', pass: semantic.mrr >= 0.8 && semantic.mrr > baseline.mrr },
    { name: `retrieval, fusion below the better of BM25 and vectors, ${where}`, measured: `${losses.length}/${heldOut.length} (${Math.round(lossShare * 100)} %)`, baseline: '—', ratio: undefined, goal: '≤ 10 % of the questions', pass: lossShare <= 0.1, note: losses.map(r => r.id).join(', ') }
  ]
  const parts = [`## Retrieval: the right file first (${provider.name})`, '',
    'Rank = place of the first answer file among the distinct files a method shows, best first (search tools: up to 3 pages of 10 chunks). ' +
    '"Most specific word" = the question\'s word found in the fewest files (chosen without knowing the answer). ' +
    'Tokens: cl100k tokens of the pages read until the answer showed (ripgrep: its whole output).', '']
  for (const split of [{ name: 'held-out (never tuned on)', held: true }, { name: 'tuning', held: false }]) {
    const records = all.filter(r => r.heldOut === split.held)
    parts.push(`### ${split.name}: ${records.length} questions, all trees`, '', methodTable(records), '')
    for (const result of results) {
      const own = result.records.filter(r => r.heldOut === split.held)
      parts.push(`#### ${split.name}, ${result.tree} (${result.folders.join(', ')}: ${result.files} files, ${result.chunks} chunks, ${result.vectors} vectors)`, '', methodTable(own), '')
    }
  }
  parts.push('### Every question: rank of the answer per method (— = not in the first 10 files)', '',
    '| Question | held out | search_code | search_semantic | vectors | rg by count | rg path order | word |', '|---|---|---|---|---|---|---|---|')
  for (const r of all) {
    const cell = (m) => r[m].rank ?? '—'
    parts.push(`| ${r.id} | ${r.heldOut ? 'yes' : ''} | ${cell('code')} | ${cell('semantic')} | ${cell('vectors')} | ${cell('rgCount')} | ${cell('rgPath')} | ${r.word ?? '—'} |`)
  }
  return { rows, markdown: parts.join('\n') }
}
