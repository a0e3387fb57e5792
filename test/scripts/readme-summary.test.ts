import t from 'tap'
import { readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
// @ts-expect-error -- bench/ is plain JavaScript without type declarations
import { END, STALE_NOTICE, START, summaryOf, updateReadme } from '../../bench/lib/readme-summary.js'

// bench/lib/readme-summary.js: the README's performance block, generated from bench/results/latest.md.
// The goals table loses only its notes column; the peer table (with as many columns) is not taken for it.

const LATEST = [
  '# Benchmarks',
  '',
  '- Date: 2026-11-25T00:00:00.000Z',
  '- Machine: 2 × test',
  '- Node v20; commit abc1234',
  '- Sources: 0123456789abcdef (src/ and plugins/; by part: plugins 0123456789abcdef)',
  '- Load average at start: 0.1 0.1 0.1',
  '- Other: not summarized',
  '',
  '| Benchmark | Measured | Baseline (floor / peer) | Ratio | CPU ratio | Goal | Pass? | Note |',
  '|---|---|---|---|---|---|---|---|',
  '| first row | a | b | 1.00× | 1.00× | ≥ 0.9× | ✅ yes | a note |',
  '| second row | c | d | 0.50× | — | info | — | another |',
  '',
  'A paragraph between the tables.',
  '',
  '## Every peer: HTTP (3 rounds)',
  '',
  '| Server | Mode | req/s | CPU µs/req | CPU ratio | p50 | RSS | heap |',
  '|---|---|---|---|---|---|---|---|',
  '| floor | — | 1 | 2 | 1.00× | 0.1 | 1 → 2 | — |',
  '',
  'Closing words.'
].join('\n')

t.test('the goals table keeps every row and drops its notes; the peer table follows under its heading', async (t) => {
  const block = summaryOf(LATEST) as string
  const lines = block.split('\n')
  t.equal(lines[0], START)
  t.equal(lines.at(-1), END)
  t.same(lines.filter((l: string) => l.startsWith('- ')), ['- Date: 2026-11-25T00:00:00.000Z', '- Machine: 2 × test', '- Node v20; commit abc1234', '- Sources: 0123456789abcdef (src/ and plugins/; by part: plugins 0123456789abcdef)', '- Load average at start: 0.1 0.1 0.1'])
  t.ok(lines.includes('| first row | a | b | 1.00× | 1.00× | ≥ 0.9× | ✅ yes |'), 'the first row survives the separator')
  t.ok(lines.includes('| second row | c | d | 0.50× | — | info | — |'))
  t.notOk(block.includes('a note'), 'no notes column')
  t.equal(lines.filter((l: string) => l.startsWith('| floor |')).length, 1, 'the peer table once, not also as goals')
  t.ok(lines.indexOf('**Every peer: HTTP (3 rounds)**') < lines.indexOf('| Server | Mode | req/s | CPU µs/req | CPU ratio | p50 | RSS | heap |'))
  t.notOk(block.includes('Closing words') || block.includes('A paragraph'))
})

t.test('updateReadme replaces only what is between the markers, and refuses a README without them', async (t) => {
  const dir = t.testdir({ 'README.md': `# Title\n\n${START}\n${STALE_NOTICE}\nold\n${END}\n\nAfter.\n`, 'PLAIN.md': '# No markers\n' })
  t.equal(updateReadme(path.join(dir, 'README.md'), LATEST), true)
  const readme = readFileSync(path.join(dir, 'README.md'), 'utf8')
  t.ok(readme.startsWith('# Title\n\n' + START))
  t.ok(readme.endsWith(END + '\n\nAfter.\n'))
  t.notOk(readme.includes('\nold\n'))
  t.notOk(readme.includes(STALE_NOTICE), 'a new run\'s summary is not stale')
  t.equal(updateReadme(path.join(dir, 'PLAIN.md'), LATEST), false)
  writeFileSync(path.join(dir, 'PLAIN.md'), `${END}\n${START}\n`)
  t.equal(updateReadme(path.join(dir, 'PLAIN.md'), LATEST), false, 'markers out of order')
})
