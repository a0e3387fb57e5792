import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import fc from 'fast-check'
import '../helpers/property.js'
import pino from 'pino'
import t, { type Test } from 'tap'
import { createGit, gitRepositories, type GitRepositories } from '../../src/services/git/git.js'
import { createLimiter } from '../../src/services/limiter.js'
import { createTokenizer, type Tokenizer } from '../../src/services/tokenizer/tokenizer.js'
import { createWorkspace, type WorkspaceService } from '../../src/services/workspace/workspace.js'
import { gitBlame } from '../../src/tools/git-blame.js'
import { gitDiff } from '../../src/tools/git-diff.js'
import { gitLog } from '../../src/tools/git-log.js'
import { gitShow } from '../../src/tools/git-show.js'
import { commitAll, git as gitCli } from '../helpers/git-repo.js'
import { textOf, toolContext } from '../helpers/workspace-fixture.js'

interface Fixture {
  root: string
  outside: string
  services: { workspace: WorkspaceService, git: GitRepositories, tokenizer: Tokenizer }
  hashes: string[]
}

const tokenizer = createTokenizer({ workers: 0 })
const tokens = async (text: string): Promise<number> => (await tokenizer.countParts([text])).tokens[0]

/** A repository of five commits: a file grows, one is deleted, a binary, a rename; plus uncommitted edits. */
async function repository (t: Test): Promise<Fixture> {
  const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'wmcp-git-tools-')))
  t.teardown(() => fs.rmSync(base, { recursive: true, force: true }))
  const root = path.join(base, 'root')
  const outside = path.join(base, 'outside')
  fs.mkdirSync(path.join(root, 'src'), { recursive: true })
  fs.mkdirSync(outside)
  fs.writeFileSync(path.join(outside, 'secret.txt'), 'CANARY-outside\n')
  const lines = (n: number): string => Array.from({ length: n }, (_, i) => `line ${i + 1} of the app`).join('\n') + '\n'
  fs.writeFileSync(path.join(root, 'src', 'app.ts'), lines(10))
  fs.writeFileSync(path.join(root, 'old.txt'), 'old\n')
  commitAll(root, 'Start the app', '2024-01-01T10:00:00Z')
  fs.writeFileSync(path.join(root, 'src', 'app.ts'), lines(300))
  gitCli(root, ['commit', '-qam', 'Grow the app to 300 lines'], '2024-02-01T10:00:00Z')
  gitCli(root, ['rm', '-q', 'old.txt'])
  fs.writeFileSync(path.join(root, 'logo.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 1]))
  gitCli(root, ['add', 'logo.png'])
  gitCli(root, ['commit', '-qm', 'Remove old.txt, add a logo'], '2024-03-01T10:00:00Z')
  gitCli(root, ['mv', 'src/app.ts', 'src/main.ts'])
  gitCli(root, ['commit', '-qm', 'Rename app to main'], '2024-04-01T10:00:00Z')
  fs.writeFileSync(path.join(root, 'notes.md'), '# Notes\n')
  gitCli(root, ['add', 'notes.md'])
  gitCli(root, ['-c', 'user.name=Bob', 'commit', '-qm', 'Add notes\n\nBy Bob, about retries.', '--author=Bob <bob@example.com>'], '2024-05-01T10:00:00Z')
  fs.appendFileSync(path.join(root, 'src', 'main.ts'), 'uncommitted line\n')
  const workspace = await createWorkspace({ root, log: pino({ level: 'silent' }) })
  const git = await createGit({ root: workspace.root, log: pino({ level: 'silent' }), limiter: createLimiter() })
  const repositories = gitRepositories([{ name: workspace.roots[0].name, git }])
  if (typeof repositories === 'string') throw new Error(repositories)
  const hashes = gitCli(root, ['log', '--format=%H']).trim().split('\n')
  return { root, outside, services: { workspace, git: repositories, tokenizer }, hashes }
}

const structured = (result: { structuredContent?: Record<string, unknown> }): Record<string, any> => result.structuredContent as Record<string, any>

t.test('git_log: newest first, filters, pages pinned to the starting commit, budget', async (t) => {
  const fx = await repository(t)
  const all = await gitLog.run({ ...fx.services }, toolContext())
  t.same(structured(all).commits.map((c: { subject: string }) => c.subject), ['Add notes', 'Rename app to main', 'Remove old.txt, add a logo', 'Grow the app to 300 lines', 'Start the app'])
  t.match(textOf(all), /^# History of \. from [0-9a-f]{12} \(HEAD\)\n\n[0-9a-f]{12} 2024-05-01 Bob — Add notes\n/)
  t.match(textOf(all), /Commits 1–5 of 5 \| next: none$/)

  const page = await gitLog.run({ ...fx.services, page_size: 2 }, toolContext())
  t.match(structured(page).pagination, { returned: 2, total: 3, total_is_lower_bound: true, has_more: true, next_offset: 2 })
  t.match(textOf(page), new RegExp(`next: git_log page_size=2 ref="${fx.hashes[0]}" offset=2$`))
  // A commit lands between pages: the pinned next call still continues the same listing.
  fs.writeFileSync(path.join(fx.root, 'late.txt'), 'late\n')
  gitCli(fx.root, ['add', 'late.txt'])
  gitCli(fx.root, ['commit', '-qm', 'Late commit'], '2024-06-01T10:00:00Z')
  const next = await gitLog.run({ ...fx.services, page_size: 2, ref: fx.hashes[0], offset: 2 }, toolContext())
  t.same(structured(next).commits.map((c: { subject: string }) => c.subject), ['Remove old.txt, add a logo', 'Grow the app to 300 lines'])

  const deleted = await gitLog.run({ ...fx.services, path: 'old.txt' }, toolContext())
  t.same(structured(deleted).commits.map((c: { subject: string }) => c.subject), ['Remove old.txt, add a logo', 'Start the app'], 'a deleted file keeps its history')
  const byBob = await gitLog.run({ ...fx.services, author: 'BOB@', grep: 'retries' }, toolContext())
  t.same(structured(byBob).commits.map((c: { author: string }) => c.author), ['Bob'])
  const dated = await gitLog.run({ ...fx.services, since: '2024-02-15', until: '2024-04-15T00:00:00Z' }, toolContext())
  t.equal(structured(dated).commits.length, 2)
  const none = await gitLog.run({ ...fx.services, grep: 'no such words' }, toolContext())
  t.match(textOf(none), /No commits match\./)
  t.same(structured(none).pagination, { offset: 0, page_size: 20, returned: 0, total: 0, total_is_lower_bound: false, has_more: false, next_offset: -1 })

  for (const since of ['yesterday', '2024-13', '1 fortnight ago', '$(touch x)', '--all']) {
    await t.rejects(Promise.resolve(gitLog.run({ ...fx.services, since }, toolContext())), { message: /^ERROR INVALID_ARGUMENT: since ".*" is not a date git_log understands/ }, since)
  }
  await t.rejects(Promise.resolve(gitLog.run({ ...fx.services, ref: 'nope' }, toolContext())), { message: /^ERROR REF_NOT_FOUND: ref: "nope" names no commit/ })

  // Many commits with long subjects against the smallest budget: fewer commits, and the next call says where to go on.
  for (let i = 0; i < 40; i++) {
    fs.writeFileSync(path.join(fx.root, 'late.txt'), `late ${i}\n`)
    gitCli(fx.root, ['commit', '-qam', `Change ${i} ${'word '.repeat(45)}`], '2024-07-01T10:00:00Z')
  }
  const tight = await gitLog.run({ ...fx.services, page_size: 100, max_response_tokens: 1000 }, toolContext())
  const shown = structured(tight).pagination.returned
  t.ok(shown > 1 && shown < 40, `${shown} commits fit 1000 tokens`)
  t.ok(await tokens(textOf(tight)) <= 1000)
  t.match(textOf(tight), new RegExp(`next: git_log page_size=100 max_response_tokens=1000 ref="[0-9a-f]{40}" offset=${shown}$`))
})

t.test('git_show: a commit whole, a narrowed commit, patches left out with their call, a file as it was', async (t) => {
  const fx = await repository(t)
  const head = await gitShow.run({ ...fx.services }, toolContext())
  t.match(textOf(head), /^# Commit [0-9a-f]{40}\n\nAuthor: Bob <bob@example\.com>, 2024-05-01T10:00:00\+00:00\nCommitted: Alice, 2024-05-01T10:00:00\+00:00\n\n {4}Add notes\n {4}\n {4}By Bob, about retries\.\n\n## 1 file changed\n\nA notes\.md \(\+1 −0\)\n\n## Patch\n\ndiff --git a\/notes\.md b\/notes\.md\n/)
  t.match(structured(head), { author: 'Bob', subject: 'Add notes', files: [{ path: 'notes.md', status: 'A', added: 1, deleted: 0, patch_shown: true }] })

  const grow = await gitShow.run({ ...fx.services, ref: 'HEAD~3', max_response_tokens: 1000 }, toolContext())
  t.match(textOf(grow), /M src\/app\.ts \(\+290 −0\)/)
  t.match(textOf(grow), /more lines of this patch left out \(budget\)/, 'a patch bigger than the budget is cut, not dropped')
  t.ok(await tokens(textOf(grow)) <= 1000)

  const mixed = await gitShow.run({ ...fx.services, ref: 'HEAD~2', context_lines: 0 }, toolContext())
  t.match(textOf(mixed), /A logo\.png \(binary\)\nD old\.txt \(\+0 −1\)/)
  t.match(structured(mixed).files, [{ path: 'logo.png', status: 'A', patch_shown: true }, { path: 'old.txt', status: 'D', added: 0, deleted: 1 }])

  const renamed = await gitShow.run({ ...fx.services, ref: 'HEAD~1' }, toolContext())
  t.match(textOf(renamed), /R src\/app\.ts → src\/main\.ts 100% \(\+0 −0\)/)
  t.match(structured(renamed).files, [{ path: 'src/main.ts', old_path: 'src/app.ts', status: 'R' }])

  // The first commit: no parent to diff against, so the left-out patch is reached by narrowing the commit.
  const first = await gitShow.run({ ...fx.services, ref: fx.hashes[4], max_response_tokens: 1000, context_lines: 20 }, toolContext())
  t.match(textOf(first), /## 2 files changed/)
  const narrowed = await gitShow.run({ ...fx.services, ref: fx.hashes[4], path: 'src' }, toolContext())
  t.match(textOf(narrowed), /## 1 file changed under src\n\nA src\/app\.ts/)

  // Two large patches: the second is left out for the budget, with the git_diff call that shows it.
  fs.writeFileSync(path.join(fx.root, 'a.txt'), 'a\n'.repeat(700))
  fs.writeFileSync(path.join(fx.root, 'b.txt'), 'b\n'.repeat(700))
  gitCli(fx.root, ['add', 'a.txt', 'b.txt'])
  gitCli(fx.root, ['commit', '-qm', 'Two big files'], '2024-06-01T10:00:00Z')
  const two = await gitShow.run({ ...fx.services, max_response_tokens: 2000 }, toolContext())
  t.match(textOf(two), new RegExp(`\\(patch of b\\.txt left out for the budget: git_diff from="${fx.hashes[0].slice(0, 12)}" to="[0-9a-f]{12}" path="b\\.txt"\\)`))
  t.match(structured(two).files, [{ path: 'a.txt', patch_shown: true }, { path: 'b.txt', patch_shown: false }])
  const twoWithout = await gitShow.run({ ...fx.services, max_response_tokens: 2000 }, toolContext(undefined, ['git_diff']))
  t.match(textOf(twoWithout), /\n\(patch of b\.txt left out for the budget\)$/, 'no call to a tool the server does not serve')

  const file = await gitShow.run({ ...fx.services, ref: fx.hashes[3], show: 'file', path: 'src/app.ts', start_line: 2, end_line: 4 }, toolContext())
  t.equal(textOf(file), `# src/app.ts at ${fx.hashes[3].slice(0, 12)} — lines 2–4 of 300\n\n2│line 2 of the app\n3│line 3 of the app\n4│line 4 of the app`)
  t.match(structured(file), { path: 'src/app.ts', lines: [2, 4], files: [] })
  const budgeted = await gitShow.run({ ...fx.services, ref: fx.hashes[3], show: 'file', path: 'src/app.ts', max_response_tokens: 1000 }, toolContext())
  const cutAt = structured(budgeted).lines[1]
  t.ok(cutAt > 10 && cutAt < 300)
  t.match(textOf(budgeted), new RegExp(`Lines ${cutAt + 1}–300 left out \\(budget\\) \\| next: git_show ref="[0-9a-f]{12}" show="file" path="src/app.ts" start_line=${cutAt + 1}$`))

  await t.rejects(Promise.resolve(gitShow.run({ ...fx.services, show: 'file' }, toolContext())), { message: /^ERROR INVALID_ARGUMENT: show="file" needs path/ })
  await t.rejects(Promise.resolve(gitShow.run({ ...fx.services, show: 'file', path: 'src/app.ts' }, toolContext())), { message: /^ERROR PATH_NOT_FOUND: path: "src\/app\.ts" is not a file in commit [0-9a-f]{12}\. Hint: git_log path="src\/app\.ts"/ })
  await t.rejects(Promise.resolve(gitShow.run({ ...fx.services, show: 'file', path: 'logo.png' }, toolContext())), { message: /^ERROR BINARY_FILE: path: "logo\.png" is binary/ })
  await t.rejects(Promise.resolve(gitShow.run({ ...fx.services, show: 'file', path: 'notes.md', start_line: 5 }, toolContext())), { message: /^ERROR INVALID_ARGUMENT: start_line 5 is past the end: "notes\.md" has 1 line/ })
  await t.rejects(Promise.resolve(gitShow.run({ ...fx.services, show: 'file', path: 'notes.md', start_line: 5, end_line: 2 }, toolContext())), { message: /^ERROR INVALID_ARGUMENT: end_line 2 is before start_line 5/ })
})

t.test('git_diff: the working tree or two commits, pages of files, stat mode, refused hard links', async (t) => {
  const fx = await repository(t)
  const work = await gitDiff.run({ ...fx.services }, toolContext())
  t.match(textOf(work), /^# Diff [0-9a-f]{12} → the working tree: 1 file changed\n\nM src\/main\.ts \(\+1 −0\)\n\n## Patches\n\ndiff --git a\/src\/main\.ts b\/src\/main\.ts\n[^]*\+uncommitted line\n\nFiles 1–1 of 1 \| next: none$/)
  t.match(structured(work), { to: 'working tree', files: [{ path: 'src/main.ts', patch_shown: true }] })

  const span = await gitDiff.run({ ...fx.services, from: fx.hashes[3], to: 'HEAD', page_size: 2 }, toolContext())
  t.match(textOf(span), /: 4 files changed\n\nA logo\.png \(binary\)\nA notes\.md \(\+1 −0\)\n/)
  t.match(textOf(span), new RegExp(`Files 1–2 of 4 \\| next: git_diff from="${fx.hashes[3]}" to="${fx.hashes[0]}" page_size=2 offset=2$`))
  const second = await gitDiff.run({ ...fx.services, from: fx.hashes[3], to: fx.hashes[0], page_size: 2, offset: 2 }, toolContext())
  t.match(structured(second).files, [{ path: 'old.txt', status: 'D' }, { path: 'src/main.ts', old_path: 'src/app.ts', status: 'R', added: 0, patch_shown: true }])
  t.match(textOf(second), /rename from src\/app\.ts\nrename to src\/main\.ts/, 'a rename on a page is diffed by both its paths')

  const stat = await gitDiff.run({ ...fx.services, from: fx.hashes[3], to: 'HEAD', mode: 'stat' }, toolContext())
  t.notMatch(textOf(stat), /## Patches|diff --git/)
  t.same(structured(stat).files.map((f: { patch_shown: boolean }) => f.patch_shown), [false, false, false, false])

  const narrowed = await gitDiff.run({ ...fx.services, from: fx.hashes[3], to: 'HEAD', path: 'src/main.ts' }, toolContext())
  t.match(textOf(narrowed), /under src\/main\.ts: 1 file changed\n\nA src\/main\.ts/, 'without its old path in the filter, a rename is an addition')

  const empty = await gitDiff.run({ ...fx.services, from: fx.hashes[4], to: 'HEAD', offset: 100 }, toolContext())
  t.match(textOf(empty), /: 5 files changed\n\n\nFiles 0 of 5 \| next: none$/)
  const grown = await gitDiff.run({ ...fx.services, from: fx.hashes[4], to: fx.hashes[3], max_response_tokens: 1000 }, toolContext())
  t.match(textOf(grown), /more lines of this patch left out \(budget\)/, 'one patch over budget is cut')
  t.match(structured(grown).files, [{ path: 'src/app.ts', patch_shown: false }])
  const tight = await gitDiff.run({ ...fx.services, from: fx.hashes[4], to: 'HEAD', max_response_tokens: 1000 }, toolContext())
  t.match(textOf(tight), /\(patch of src\/main\.ts left out for the budget: git_diff from="[0-9a-f]{40}" to="[0-9a-f]{40}" max_response_tokens=1000 path="src\/main\.ts"\)/)

  // A tracked file replaced by a hard link to a file outside the root: listed, its content never shown.
  fs.rmSync(path.join(fx.root, 'notes.md'))
  fs.linkSync(path.join(fx.outside, 'secret.txt'), path.join(fx.root, 'notes.md'))
  const linked = await gitDiff.run({ ...fx.services }, toolContext())
  t.match(textOf(linked), /M notes\.md \(\+1 −1\)/)
  t.match(textOf(linked), /\(patch of notes\.md not shown: HARD_LINK_REFUSED — the working-tree file is not one the workspace serves\)/)
  t.notMatch(textOf(linked), /CANARY/)
  t.match(structured(linked).files, [{ path: 'notes.md', patch_shown: false }, { path: 'src/main.ts', patch_shown: true }])
  // The same file between two commits is history, not the working tree: nothing to refuse.
  fs.rmSync(path.join(fx.root, 'src', 'main.ts'))
  const gone = await gitDiff.run({ ...fx.services, path: 'src' }, toolContext())
  t.match(textOf(gone), /D src\/main\.ts \(\+0 −300\)/)

  // Nothing changed: where else to look, never an empty list alone.
  const quiet = await gitDiff.run({ ...fx.services, path: 'docs' }, toolContext())
  t.match(textOf(quiet), /: 0 files changed\n\nNo uncommitted changes under docs\. Committed ones: git_log path="docs" lists the commits, git_diff path="docs" from="HEAD~1" to="HEAD" shows the last\.\n/)
  const same = await gitDiff.run({ ...fx.services, from: 'HEAD', to: 'HEAD' }, toolContext())
  t.match(textOf(same), /: 0 files changed\n\nNo changes between [0-9a-f]{12} and [0-9a-f]{12}\. git_log lists the commits that touched it\.\n/)
})

t.test('git_blame: lines with their commits, pinned next call, range errors', async (t) => {
  const fx = await repository(t)
  const blame = await gitBlame.run({ ...fx.services, path: 'src/main.ts', start_line: 9, end_line: 12 }, toolContext())
  const short = (i: number): string => fx.hashes[i].slice(0, 12)
  t.equal(textOf(blame), [
    `# Blame of src/main.ts at ${short(0)} — lines 9–12 of 300`,
    '',
    `${short(4)} 2024-01-01 Alice             9│line 9 of the app`,
    `${' '.repeat(41)}10│line 10 of the app`,
    `${short(3)} 2024-02-01 Alice            11│line 11 of the app`,
    `${' '.repeat(41)}12│line 12 of the app`,
    '',
    '## 2 commits',
    '',
    `${short(4)} Start the app`,
    `${short(3)} Grow the app to 300 lines`,
    '',
    `More lines | next: git_blame path="src/main.ts" start_line=13 end_line=16 ref="${short(0)}"`
  ].join('\n'))
  t.match(structured(blame), { path: 'src/main.ts', ref: fx.hashes[0], total_lines: 300, lines: [{ line: 9, hash: fx.hashes[4], author: 'Alice', date: '2024-01-01T10:00:00Z' }] })

  const old = await gitBlame.run({ ...fx.services, path: 'src/app.ts', ref: 'HEAD~2', start_line: 299 }, toolContext())
  t.match(textOf(old), /lines 299–300 of 300/)
  t.notMatch(textOf(old), /next:/, 'the end of the file has no next call')

  const tight = await gitBlame.run({ ...fx.services, path: 'src/main.ts', start_line: 1, end_line: 500, max_response_tokens: 1000 }, toolContext())
  const shown = structured(tight).lines.length
  t.ok(shown > 10 && shown < 300)
  t.match(textOf(tight), new RegExp(`Lines left out \\(budget\\) \\| next: git_blame path="src/main.ts" start_line=${shown + 1} end_line=300 ref="${short(0)}"$`))

  await t.rejects(Promise.resolve(gitBlame.run({ ...fx.services, path: 'old.txt' }, toolContext())), { message: /^ERROR PATH_NOT_FOUND: path: "old\.txt" is not a file in commit/ })
  await t.rejects(Promise.resolve(gitBlame.run({ ...fx.services, path: 'notes.md', start_line: 3 }, toolContext())), { message: /^ERROR INVALID_ARGUMENT: start_line 3 is past the end: "notes\.md" has 1 line at [0-9a-f]{12}\. Hint: e\.g\. start_line=1 end_line=1/ })
  await t.rejects(Promise.resolve(gitBlame.run({ ...fx.services, path: 'notes.md', start_line: 3, end_line: 2 }, toolContext())), { message: /^ERROR INVALID_ARGUMENT: end_line 2 is before start_line 3/ })
  await t.rejects(Promise.resolve(gitBlame.run({ ...fx.services, path: 'notes.md', start_line: 1, end_line: 501 }, toolContext())), { message: /^ERROR INVALID_ARGUMENT: 501 lines asked, at most 500 per call/ })
})

t.test('hostile paths and refs: refused before git runs, never an option, never outside the root', async (t) => {
  const fx = await repository(t)
  const cases: Array<[Record<string, unknown>, RegExp]> = [
    [{ path: '../outside/secret.txt' }, /^ERROR PATH_OUTSIDE_ROOT/],
    [{ path: path.join(fx.outside, 'secret.txt') }, /^ERROR PATH_OUTSIDE_ROOT: path: the absolute path given/],
    [{ path: 'bad-\\xff.txt' }, /^ERROR INVALID_PATH: path: "bad-\\xff\.txt" is not valid UTF-8/],
    [{ path: 'a\nb' }, /^ERROR INVALID_PATH: path contains the control character/]
  ]
  for (const tool of [gitLog, gitShow, gitDiff, gitBlame]) {
    for (const [args, error] of cases) {
      await t.rejects(Promise.resolve().then(() => tool.run({ ...fx.services, path: 'x', ...args } as never, toolContext())), { message: error }, `${tool.name} ${JSON.stringify(args)}`)
    }
  }
  // Pathspec magic is literal text: `:(top)` and `:/` name files that do not exist, not the whole repository.
  for (const magic of [':(top)', ':/', ':(glob)**', ':!src']) {
    const result = await gitLog.run({ ...fx.services, path: magic }, toolContext())
    t.equal(structured(result).commits.length, 0, magic)
  }
  const probe = path.join(fx.outside, 'written')
  await fc.assert(fc.asyncProperty(fc.constantFrom('ref', 'from', 'to'), fc.oneof(fc.string({ maxLength: 30 }), fc.constant(`--output=${probe}`), fc.constant('-p')), async (field, value) => {
    const tool = field === 'ref' ? gitLog : gitDiff
    const outcome = await Promise.resolve().then(() => tool.run({ ...fx.services, [field]: value } as never, toolContext())).then(() => 'ok', (e: Error) => e.message)
    return outcome === 'ok' || new RegExp(`^ERROR (INVALID_ARGUMENT: ${field} must be one revision|REF_NOT_FOUND: ${field}: )`).test(outcome)
  }), { numRuns: 120 })
  t.notOk(fs.existsSync(probe))
})

t.test('large, wide and unusual commits: merges, empty commits, too many files, patches too large, lines too wide', async (t) => {
  const fx = await repository(t)
  gitCli(fx.root, ['checkout', '-q', '-b', 'side'])
  fs.writeFileSync(path.join(fx.root, 'side.txt'), 'side\n')
  gitCli(fx.root, ['add', 'side.txt'])
  gitCli(fx.root, ['commit', '-qm', 'Side work'], '2024-06-01T10:00:00Z')
  gitCli(fx.root, ['checkout', '-q', 'main'])
  gitCli(fx.root, ['merge', '-q', '--no-ff', '-m', 'Merge side', 'side'], '2024-06-02T10:00:00Z')
  const log = await gitLog.run({ ...fx.services, page_size: 1 }, toolContext())
  t.match(textOf(log), / Alice \(merge\) — Merge side/)
  const merge = await gitShow.run({ ...fx.services }, toolContext())
  t.match(textOf(merge), /Merge of [0-9a-f]{12} \+ [0-9a-f]{12}; the patch is against the first parent\./)
  t.match(structured(merge).files, [{ path: 'side.txt', status: 'A' }])

  gitCli(fx.root, ['commit', '-q', '--allow-empty', '-m', 'Nothing changed'], '2024-06-03T10:00:00Z')
  const empty = await gitShow.run({ ...fx.services }, toolContext())
  t.match(textOf(empty), /## 0 files changed\n$/)

  const long = Array.from({ length: 400 }, (_, i) => `Paragraph ${i} of a very long message about nothing in particular.`).join('\n')
  gitCli(fx.root, ['commit', '-q', '--allow-empty', '-m', `Long message\n\n${long}`], '2024-06-04T10:00:00Z')
  fs.writeFileSync(path.join(fx.root, 'notes.md'), '# Notes\nmore\n')
  gitCli(fx.root, ['commit', '-qam', `Edit notes\n\n${long}`], '2024-06-05T10:00:00Z')
  const verbose = await gitShow.run({ ...fx.services, max_response_tokens: 1000 }, toolContext())
  t.match(textOf(verbose), /\(patch of notes\.md left out for the budget: git_diff/, 'a message over budget leaves every patch out')
  const wordy = await gitShow.run({ ...fx.services, ref: 'HEAD~1', max_response_tokens: 1000 }, toolContext())
  t.match(textOf(wordy), /Paragraph 399 of a very long message[^]*## 0 files changed\n$/, 'a message over budget with no patch to leave out is still answered')

  fs.mkdirSync(path.join(fx.root, 'many'))
  for (let i = 0; i < 201; i++) fs.writeFileSync(path.join(fx.root, 'many', `f${String(i).padStart(3, '0')}.txt`), `${i}\n`)
  gitCli(fx.root, ['add', 'many'])
  gitCli(fx.root, ['commit', '-qm', 'Many files'], '2024-06-06T10:00:00Z')
  const many = await gitShow.run({ ...fx.services, max_response_tokens: 20000 }, toolContext())
  t.match(textOf(many), /## 201 files changed\n[^]*… and 1 more \(git_diff pages through them, e\.g\. git_diff from="[0-9a-f]{12}" to="[0-9a-f]{12}" path="\."\)$/)
  t.notMatch(textOf(many), /## Patch/)
  t.equal(structured(many).files.length, 200)
  const listed = await gitDiff.run({ ...fx.services, from: 'HEAD~1', to: 'HEAD', mode: 'stat', page_size: 200, max_response_tokens: 1000 }, toolContext())
  const kept = structured(listed).files.length
  t.ok(kept > 10 && kept < 200, `${kept} file lines fit 1000 tokens`)
  t.ok(await tokens(textOf(listed)) <= 1000)
  t.match(textOf(listed), new RegExp(`Files 1–${kept} of 201 \\| next: git_diff from="[0-9a-f]{40}" to="[0-9a-f]{40}" mode="stat" page_size=200 max_response_tokens=1000 offset=${kept}$`))

  // 17 MB of patch: past the 16 MiB read cap, so the huge file has no patch, and the small one still does.
  const huge = 'x'.repeat(99) + '\n'
  fs.writeFileSync(path.join(fx.root, 'huge.txt'), huge.repeat(170_000))
  fs.writeFileSync(path.join(fx.root, 'small.txt'), 'small\n')
  gitCli(fx.root, ['add', 'huge.txt', 'small.txt'])
  gitCli(fx.root, ['commit', '-qm', 'Huge file'], '2024-06-07T10:00:00Z')
  const big = await gitShow.run({ ...fx.services }, toolContext())
  t.match(textOf(big), /\(patch of huge\.txt too large to show with the rest: git_diff from="[0-9a-f]{12}" to="[0-9a-f]{12}" path="huge\.txt"\)/)
  const bigDiff = await gitDiff.run({ ...fx.services, from: 'HEAD~1', to: 'HEAD' }, toolContext())
  t.match(textOf(bigDiff), /\(patch of huge\.txt too large to show: narrow it with context_lines=0, or read the file\)/)
  t.match(textOf(bigDiff), /\+small/)
  t.match(structured(bigDiff).files, [{ path: 'huge.txt', patch_shown: false }, { path: 'small.txt', patch_shown: true }])
  const cut = await gitShow.run({ ...fx.services, show: 'file', path: 'huge.txt', start_line: 100_000, end_line: 100_001 }, toolContext())
  t.match(textOf(cut), /— lines 100000–100001 of 104858 \(file cut at 10 MB\)/)

  // One line wider than the whole budget: the answer still shows it (cut), rather than nothing.
  fs.writeFileSync(path.join(fx.root, 'wide.txt'), '字'.repeat(3000) + '\n')
  gitCli(fx.root, ['add', 'wide.txt'])
  gitCli(fx.root, ['commit', '-qm', 'Wide line'], '2024-06-08T10:00:00Z')
  const blame = await gitBlame.run({ ...fx.services, path: 'wide.txt', max_response_tokens: 1000 }, toolContext())
  t.match(textOf(blame), /1│字{10}/)
  t.equal(structured(blame).lines.length, 1)
  const shown = await gitShow.run({ ...fx.services, show: 'file', path: 'wide.txt', max_response_tokens: 1000 }, toolContext())
  t.match(textOf(shown), /^# wide\.txt at [0-9a-f]{12} — lines 1–1 of 1\n\n1│字{10}/)
})
