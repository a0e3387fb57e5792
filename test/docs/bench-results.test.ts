import fs from 'node:fs'
import t from 'tap'
import { recordedSources, sourcesHash, staleParts } from '../../bench/lib/sources.js'
// @ts-expect-error -- bench/ is plain JavaScript without type declarations
import { END, STALE_NOTICE, START } from '../../bench/lib/readme-summary.js'

// The published benchmark run (bench/results/latest.md, and the bench/README.md block made from it) records the
// content hashes of what it measured (src/ and plugins/, by part). While the tree's differ, the summary says its
// figures are stale; once `npm run bench` re-measures, it says nothing of the kind. So a change to the engine,
// a transport or a service never passes unnoticed, and no commit has to re-run the bench to pass.

const latest = fs.readFileSync('bench/results/latest.md', 'utf8')
const readme = fs.readFileSync('bench/README.md', 'utf8')
const summary = readme.slice(readme.indexOf(START as string), readme.indexOf(END as string))

t.test('the published run records the sources it measured, and the README says whether its figures are stale', async (t) => {
  const recorded = recordedSources(latest)
  t.ok(recorded !== undefined, 'bench/results/latest.md has a Sources line')
  const stale = recorded === undefined ? ['(all)'] : staleParts(recorded, sourcesHash('.'))
  t.comment(stale.length === 0 ? 'the published figures measured these sources' : `changed since the published run: ${stale.join(', ')}`)

  t.ok(summary.includes(`- Sources: ${recorded?.whole ?? '?'} `), 'the README summary shows the same Sources line')
  t.equal(summary.includes(STALE_NOTICE as string), stale.length > 0, stale.length > 0
    ? `the figures measured an earlier ${stale.join(', ')}: put the stale notice (STALE_NOTICE in bench/lib/readme-summary.js) after the summary's start marker, or run \`npm run bench\``
    : 'the sources are the measured ones: the summary must not call itself stale')
})

t.test('a part changed, added or gone is stale; the rest are not', async (t) => {
  const recorded = { whole: 'a', byPart: { plugins: '1', src: '2', 'src/mcp': '3' } }

  const current = { whole: 'b', byPart: { plugins: '1', src: '9', 'src/tools': '4' } }

  t.strictSame(staleParts(recorded, current), ['src', 'src/mcp', 'src/tools'])
  t.strictSame(staleParts(recorded, recorded), [])
})
