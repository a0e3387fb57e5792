import { readFileSync, statSync, utimesSync, existsSync } from 'node:fs'
import path from 'node:path'
import t from 'tap'
// @ts-expect-error -- bench/ is plain JavaScript without type declarations
import { RETRIEVAL_END, RETRIEVAL_START, updateRetrieval } from '../../bench/lib/readme-summary.js'
// @ts-expect-error -- bench/ is plain JavaScript without type declarations
import { retrievalReport } from '../../bench/lib/retrieval-report.js'
import { copyTree, versionNote } from '../../bench/lib/retrieval-trees.js'
import { sharesNoWord } from '../../bench/lib/retrieval-words.js'

// The retrieval bench's harness: which questions share no word with their answer (read by the index's own
// tokenizer), the figures per set and kind of question, split held out / tuning, the README block, and the copy of
// a tree. The bench itself needs the trees and a model; these run on made-up records.

t.test('a question shares a word with its answer through the index\'s tokenizer, and only then', async (t) => {
  const answer = (p: string, symbol: string): Array<{ path: string, symbol: string }> => [{ path: p, symbol }]
  t.equal(sharesNoWord('where is the default request id generated', answer('fastify/lib/req-id-gen-factory.js', 'buildDefaultGenReqId')), false, 'request meets req (an abbreviation the index joins)')
  t.equal(sharesNoWord('how are failed uploads retried', answer('src/x.ts', 'retryFailedUpload')), false, 'camelCase parts, stemmed: uploads / Upload, retried / retry')
  t.equal(sharesNoWord('hide sensitive fields before a record is written out', answer('pino/lib/redaction.js', 'redaction')), true)
  t.equal(sharesNoWord('which lib helper', answer('lib/b.js', 'c')), false, 'a folder of the path counts')
  t.equal(sharesNoWord('which js helper', answer('src/b.js', 'c')), true, 'the extension does not count')
  t.equal(sharesNoWord('remove stale things', answer('x/y.ts', 'deleteOld')), true, 'no synonyms: remove is not delete, though a search for one finds the other')
  t.equal(sharesNoWord('how is the page freed', [{ path: 'a/b.c', symbol: 'x' }, { path: 'mm/page.c', symbol: 'y' }]), false, 'any answer sharing a word is enough')
  t.equal(sharesNoWord('where is it done', answer('a/where.js', 'done')), false, 'a question of stop words only keeps them (as a query does)')
})

/** A record as runSet makes it: one rank per method (undefined: not in the first ten files). */
function record (id: string, set: string, kind: string, heldOut: boolean, code: number | undefined, semantic: number | undefined, noSharedWord = false): object {
  const at = (rank: number | undefined): { rank: number | undefined, tokens: number | undefined } => ({ rank, tokens: rank === undefined ? undefined : 100 * rank })
  return { id, set, kind, heldOut, noSharedWord, word: 'word', code: at(code), semantic: at(semantic), vectors: at(undefined), rgCount: at(2), rgPath: at(undefined) }
}

const ALPHA = [
  record('a-1', 'alpha', 'where', true, 1, 1), record('a-2', 'alpha', 'how', true, 2, 1), record('a-3', 'alpha', 'reworded', true, undefined, 4, true),
  record('a-4', 'alpha', 'where', false, 1, 2), record('a-5', 'alpha', 'reworded', false, 5, 5, true)
]
const BETA = [record('b-1', 'beta', 'how', true, 1, 1), record('b-2', 'beta', 'reworded', true, 2, 2), record('b-3', 'beta', 'how', false, undefined, undefined)]
const RESULTS = [
  { name: 'alpha', tree: 'alpha-tree', folders: ['lib'], files: 3, chunks: 30, vectors: 30, records: ALPHA },
  { name: 'beta', tree: 'beta-tree', folders: ['src', 'docs'], note: 'libx 2 here, questions written on 1', files: 2, chunks: 20, vectors: 20, records: BETA }
]
const PROVIDER = { name: 'Test Model (8 dims)' }

t.test('MRR@10 per set and kind, held out and tuning apart, with the questions that share no word', async (t) => {
  const { markdown } = retrievalReport(RESULTS, PROVIDER, 10) as { markdown: string }
  const lines = markdown.split('\n')
  t.ok(lines[0].includes('Test Model (8 dims)'), 'the model is named')
  const row = (split: string, set: string, group: string): string[] => {
    const at = lines.findIndex(l => l.startsWith(`#### ${split}`) && l.includes('by set and kind'))
    const found = lines.slice(at).find(l => l.startsWith(`| ${set} | ${group} |`))
    return (found ?? '').split('|').slice(1, -1).map(c => c.trim())
  }
  // alpha held out: code ranks 1, 2, — (MRR 0.5); semantic 1, 1, 4 (0.75). The reworded one shares no word.
  t.same(row('held-out', 'alpha', 'all'), ['alpha', 'all', '3', '0.50', '0.75', '0.00', '0.50', '0.00'])
  t.same(row('held-out', 'alpha', 'where'), ['alpha', 'where', '1', '1.00', '1.00', '0.00', '0.50', '0.00'])
  t.same(row('held-out', 'alpha', 'reworded'), ['alpha', 'reworded', '1', '0.00', '0.25', '0.00', '0.50', '0.00'])
  t.same(row('held-out', 'alpha', 'no shared word'), ['alpha', 'no shared word', '1', '0.00', '0.25', '0.00', '0.50', '0.00'])
  t.same(row('held-out', 'beta', 'where'), ['beta', 'where', '0', '—', '—', '—', '—', '—'], 'an empty group is a dash, not a zero')
  t.same(row('held-out', 'all sets', 'reworded'), ['all sets', 'reworded', '2', '0.25', '0.38', '0.00', '0.50', '0.00'])
  t.same(row('tuning', 'alpha', 'all'), ['alpha', 'all', '2', '0.60', '0.35', '0.00', '0.50', '0.00'], 'tuning questions apart')
  t.same(row('tuning', 'beta', 'how'), ['beta', 'how', '1', '0.00', '0.00', '0.00', '0.50', '0.00'])
  t.ok(lines.some(l => l.startsWith('#### held-out (never tuned on), beta: beta-tree (2 folders: 2 files, 20 chunks, 20 vectors; libx 2 here, questions written on 1)')), 'a tree at other versions says so')
  t.ok(lines.includes('| a-3 | reworded | yes | yes | — | 4 | — | 2 | — | word |'), 'every question with its kind and the no-shared-word mark')
})

t.test('goal rows: all sets, each set, and the reworded questions, judged on the held-out ones only', async (t) => {
  const { rows } = retrievalReport(RESULTS, PROVIDER, 10) as { rows: Array<{ name: string, measured: string, pass: boolean }> }
  const named = (text: string): { name: string, measured: string, pass: boolean } | undefined => rows.find(r => r.name.includes(text))
  t.equal(named('search_code, 5 held-out questions over alpha-tree, beta-tree')?.measured, 'MRR@10 0.60, hit@1 2/5, hit@5 4/5')
  t.equal(named('search_code, 3 held-out questions of alpha (alpha-tree)')?.measured, 'MRR@10 0.50, hit@1 1/3, hit@5 2/3')
  t.equal(named('search_code, 2 held-out questions of beta (beta-tree)')?.pass, true, 'MRR@10 0.75 ≥ 0.75, above ripgrep\'s 0.50')
  t.equal(named('search_semantic, 2 held-out questions of beta (beta-tree)')?.pass, false, 'MRR@10 0.75 < 0.8')
  t.equal(named('search_semantic, 2 held-out questions worded without the code\'s words, all sets')?.measured, 'MRR@10 0.38, hit@1 0/2, hit@5 2/2')
  t.equal(named('fusion below the better')?.measured, '0/5 (0 %)')
})

t.test('a run of the tuning questions alone judges its goals on them, says so, and has no held-out table', async (t) => {
  const tuning = RESULTS.map(r => ({ ...r, records: r.records.filter(x => !(x as { heldOut: boolean }).heldOut) }))
  const { rows, markdown } = retrievalReport(tuning, PROVIDER, 10, { split: 'tuning' }) as { rows: Array<{ name: string, measured: string }>, markdown: string }
  t.equal(rows.find(r => r.name.includes('search_code, 3 tuning questions over alpha-tree, beta-tree'))?.measured, 'MRR@10 0.40, hit@1 1/3, hit@5 2/3')
  t.equal(rows.find(r => r.name.includes('search_code, 2 tuning questions of alpha (alpha-tree)'))?.measured, 'MRR@10 0.60, hit@1 1/2, hit@5 2/2')
  t.notOk(rows.some(r => r.name.includes('held-out')), 'no row speaks for the held-out questions')
  t.ok(markdown.includes('BENCH_RETRIEVAL_SPLIT=tuning'))
  t.notOk(markdown.includes('### held-out'))
  t.ok(markdown.includes('### tuning: 3 questions, all sets'))
  const other = retrievalReport(RESULTS, PROVIDER, 10, { label: 'before' }) as { rows: Array<{ name: string }>, markdown: string }
  t.ok(other.rows.every(r => r.name.endsWith('[before]')) && other.markdown.startsWith('## Retrieval: the right file first (Test Model (8 dims)) [before]'), 'another build is named in every row')
})

t.test('the README block takes the goals, the held-out table and the held-out table by set and kind', async (t) => {
  const { rows, markdown } = retrievalReport(RESULTS, PROVIDER, 10) as { rows: Array<{ name: string, measured: string, goal: string, pass: boolean }>, markdown: string }
  const goals = ['| Benchmark | Measured | Baseline (floor / peer) | Ratio | CPU ratio | Goal | Pass? | Note |', '|---|---|---|---|---|---|---|---|',
    ...rows.map(r => `| ${r.name} | ${r.measured} | — | — | — | ${r.goal} | ${r.pass ? '✅ yes' : '❌ no'} | |`)]
  const dir = t.testdir({ 'README.md': `# Bench\n\n${RETRIEVAL_START}\nold\n${RETRIEVAL_END}\n\nAfter.\n` })
  t.equal(updateRetrieval(path.join(dir, 'README.md'), ['# Benchmark results', '', '- Date: today', '', ...goals, '', markdown].join('\n')), true)
  const readme = readFileSync(path.join(dir, 'README.md'), 'utf8')
  t.ok(readme.includes('- retrieval, search_code, 3 held-out questions of alpha (alpha-tree): MRR@10 0.50, hit@1 1/3, hit@5 2/3 (goal MRR@10 ≥ 0.75 and above ripgrep by count: ❌ no)'))
  t.ok(readme.includes('**held-out (never tuned on): 5 questions, all sets**'))
  t.ok(readme.includes('**held-out (never tuned on), MRR@10 by set and kind of question**'))
  t.ok(readme.includes('| all sets | reworded | 2 | 0.25 | 0.38 | 0.00 | 0.50 | 0.00 |'))
  t.notOk(readme.includes('| alpha | all | 2 |'), 'no tuning figures')
  t.notOk(readme.includes('\nold\n'))
  t.ok(readme.endsWith(`${RETRIEVAL_END}\n\nAfter.\n`))
})

t.test('a tree is copied with its mtimes and without what its set leaves out', async (t) => {
  const source = t.testdir({
    pkg: { lib: { 'a.js': 'a', 'a.d.ts': 'types', __pycache__: { 'a.pyc': 'x' } }, 'index.js': 'i', 'other.js': 'o' },
    loose: { 'b-wasm.js': 'blob', 'b.js': 'b' }
  })
  const past = new Date('2020-01-02T03:04:05Z')
  utimesSync(path.join(source, 'pkg', 'lib', 'a.js'), past, past)
  const tree = path.join(source, 'copy')
  copyTree({ tree: 'made-up', folders: ['pkg/lib', 'pkg/index.js', 'loose'], exclude: ['**/*.d.ts', '**/__pycache__', 'loose/*-wasm.js'] }, tree, source)
  t.ok(existsSync(path.join(tree, 'pkg', 'lib', 'a.js')) && existsSync(path.join(tree, 'pkg', 'index.js')) && existsSync(path.join(tree, 'loose', 'b.js')))
  t.notOk(existsSync(path.join(tree, 'pkg', 'other.js')), 'only the folders and files named')
  t.notOk(existsSync(path.join(tree, 'pkg', 'lib', 'a.d.ts')) || existsSync(path.join(tree, 'pkg', 'lib', '__pycache__')) || existsSync(path.join(tree, 'loose', 'b-wasm.js')), 'excluded')
  t.equal(statSync(path.join(tree, 'pkg', 'lib', 'a.js')).mtimeMs, past.getTime(), 'mtime kept: the index and its vectors stay valid')
})

t.test('a Python tree at another Debian version than its questions were written on is noted, others are not', async (t) => {
  t.match(versionNote({ tree: 'python3.11-stdlib', folders: [], locked: { 'no-such-package-i42': '1.0' } }), /no-such-package-i42 not found by dpkg here, questions written on 1\.0/)
  t.equal(versionNote({ tree: 'js-libraries', folders: [], locked: { fastify: '0.0.1' } }), undefined, 'node_modules is refused by missingTree instead')
})
