import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import t from 'tap'

// The published benchmark run (bench/results/latest.md, and the bench/README.md block made from it) names the commit it
// measured; the tool list it measured is the one the code has now.

const latest = fs.readFileSync('bench/results/latest.md', 'utf8')
const commit = /^- Node v[\d.]+; commit ([0-9a-f]{7,40})$/m.exec(latest)?.[1]
const git = (...args: string[]): string => execFileSync('git', args, { encoding: 'utf8' }).trim()

const shallow = git('rev-parse', '--is-shallow-repository') === 'true'

t.test('the published run names a commit of this history, and src/tools/index.ts has not changed since it', { skip: shallow ? 'a shallow clone holds no history to compare with' : false }, async (t) => {
  t.ok(commit !== undefined, 'bench/results/latest.md names its commit')
  const full = git('rev-parse', '--verify', `${commit ?? 'none'}^{commit}`)
  t.match(full, /^[0-9a-f]{40}$/)
  const changed = git('diff', '--name-only', full, 'HEAD', '--', 'src/tools/index.ts')
  t.equal(changed, '', `the tool list changed since the published run (commit ${commit ?? '?'}): run \`npm run bench\` and commit bench/results/latest.md`)
})
