import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import fc from 'fast-check'
import '../../helpers/property.js'
import pino from 'pino'
import t, { type Test } from 'tap'
import { createGit, gitRepositories, type GitService } from '../../../src/services/git/git.js'
import { gitEnvironment, runGit } from '../../../src/services/git/run.js'
import { createLimiter } from '../../../src/services/limiter.js'
import { commitAll, git } from '../../helpers/git-repo.js'

const log = pino({ level: 'silent' })

function tempRoot (t: Test): string {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'wmcp-git-')))
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }))
  return dir
}

async function serviceFor (root: string): Promise<GitService> {
  const created = await createGit({ root, log, limiter: createLimiter() })
  if (typeof created === 'string') throw new Error(created)
  return created
}

/** A repository whose own config and attributes try every way git has to run a program on a read. */
function hostileRepository (t: Test): { root: string, marker: string } {
  const root = tempRoot(t)
  const marker = path.join(tempRoot(t), 'ran')
  const script = path.join(root, 'evil.sh')
  fs.writeFileSync(script, `#!/bin/sh\necho "$0 $*" >> '${marker}'\ncat\n`, { mode: 0o755 })
  fs.writeFileSync(path.join(root, '.gitattributes'), '* filter=evil diff=evil\n')
  fs.writeFileSync(path.join(root, 'a.txt'), 'one\ntwo\n')
  commitAll(root, 'first')
  fs.mkdirSync(path.join(root, '.git', 'hooks'), { recursive: true })
  for (const hook of ['post-index-change', 'post-checkout', 'reference-transaction']) fs.copyFileSync(script, path.join(root, '.git', 'hooks', hook))
  const config = [
    ['filter.evil.clean', script], ['filter.evil.smudge', script], ['filter.evil.process', script], ['filter.evil.required', 'true'],
    ['filter.a=b.clean', script],
    ['diff.evil.textconv', script], ['diff.evil.command', script], ['diff.external', script],
    ['core.fsmonitor', script], ['core.pager', script], ['core.hooksPath', path.join(root, '.git', 'hooks')],
    ['log.showSignature', 'true'], ['gpg.program', script], ['core.worktree', '/'], ['core.sshCommand', script]
  ]
  for (const [key, value] of config) git(root, ['config', key, value])
  // Stat-dirty and content-changed: a working-tree diff must read the file, where a clean filter would run.
  fs.writeFileSync(path.join(root, 'a.txt'), 'one\ntwo\nthree\n')
  return { root, marker }
}

t.test('a repository\'s own config cannot make a read run a program, write, or look outside the root', async (t) => {
  const { root, marker } = hostileRepository(t)
  const service = await serviceFor(root)
  const index = fs.statSync(path.join(root, '.git', 'index')).mtimeMs
  const head = await service.resolveCommit('HEAD', 'ref')

  t.same((await service.diffChanges({ from: head, path: '' })).map(c => [c.path, c.added]), [['a.txt', 1]], 'the working tree is the root, not core.worktree')
  t.match((await service.diffPatch({ from: head, path: '' }, 3)).join(''), /\+three/)
  t.equal((await service.log({ from: head, path: '', skip: 0, count: 5 })).length, 1)
  t.match(await service.commit(head), { message: 'first' })
  t.ok((await service.commitPatch(head, '', 3)).length > 0)
  t.equal((await service.blame(head, 'a.txt', 1, 2)).length, 2)
  t.equal((await service.fileAt(head, 'a.txt', 1024))?.bytes.toString(), 'one\ntwo\n')

  t.notOk(fs.existsSync(marker), `no program ran: ${fs.existsSync(marker) ? fs.readFileSync(marker, 'utf8') : ''}`)
  t.equal(fs.statSync(path.join(root, '.git', 'index')).mtimeMs, index, 'the index was not rewritten')
  t.notOk(fs.existsSync(path.join(root, '.git', 'index.lock')))
})

t.test('the child gets a fresh environment: nothing inherited reaches git', async (t) => {
  const env = gitEnvironment({ gitPath: '/usr/bin/git', gitDir: '/w/.git', workTree: '/w' })
  t.notOk(Object.keys(env).some(k => ['GIT_EXTERNAL_DIFF', 'GIT_SSH_COMMAND', 'GIT_CONFIG_PARAMETERS', 'GIT_EXEC_PATH'].includes(k)))
  const keys = Object.keys(env).filter(k => k.startsWith('GIT_CONFIG_KEY_')).map(k => env[k])
  t.ok(keys.includes('core.fsmonitor') && keys.includes('safe.directory') && keys.includes('protocol.allow'))
  t.equal(env.GIT_CONFIG_COUNT, String(keys.length))
  t.equal(env.GIT_LITERAL_PATHSPECS, '1')

  const root = tempRoot(t)
  fs.writeFileSync(path.join(root, 'x.txt'), 'x\n')
  commitAll(root, 'x')
  const marker = path.join(tempRoot(t), 'ext')
  const saved = { ...process.env }
  t.teardown(() => { process.env = saved })
  process.env.GIT_EXTERNAL_DIFF = `sh -c 'touch ${marker}'`
  process.env.GIT_DIR = '/nonexistent'
  fs.writeFileSync(path.join(root, 'x.txt'), 'y\n')
  const service = await serviceFor(root)
  t.match((await service.diffPatch({ from: await service.resolveCommit('HEAD', 'ref'), path: '' }, 3)).join(''), /\+y/)
  t.notOk(fs.existsSync(marker))
})

t.test('served only for a plain .git folder at the root, with a reason otherwise', async (t) => {
  const limiter = createLimiter()
  const plain = tempRoot(t)
  t.match(await createGit({ root: plain, log, limiter }), /no \.git folder/)

  // A folder inside a repository is not the top of its work tree: the repository is outside the root.
  const outer = tempRoot(t)
  fs.mkdirSync(path.join(outer, 'sub'))
  fs.writeFileSync(path.join(outer, 'sub', 'f'), 'f')
  commitAll(outer, 'outer')
  t.match(await createGit({ root: path.join(outer, 'sub'), log, limiter }), /no \.git folder/)

  const linked = tempRoot(t)
  fs.writeFileSync(path.join(linked, '.git'), `gitdir: ${path.join(outer, '.git')}\n`)
  t.match(await createGit({ root: linked, log, limiter }), /not a folder/)

  const borrowing = tempRoot(t)
  fs.writeFileSync(path.join(borrowing, 'f'), 'f')
  commitAll(borrowing, 'b')
  fs.mkdirSync(path.join(borrowing, '.git', 'objects', 'info'), { recursive: true })
  fs.writeFileSync(path.join(borrowing, '.git', 'objects', 'info', 'alternates'), path.join(outer, '.git', 'objects') + '\n')
  t.match(await createGit({ root: borrowing, log, limiter }), /borrows objects/)
  fs.rmSync(path.join(borrowing, '.git', 'objects', 'info', 'alternates'))
  fs.writeFileSync(path.join(borrowing, '.git', 'commondir'), '../../outer/.git\n')
  t.match(await createGit({ root: borrowing, log, limiter }), /linked work tree/)
  fs.rmSync(path.join(borrowing, '.git', 'commondir'))

  t.match(await createGit({ root: borrowing, log, limiter, gitPath: '/nonexistent/git' }), /does not run/)
  const fake = path.join(tempRoot(t), 'git')
  fs.writeFileSync(fake, '#!/bin/sh\necho "git version 2.20.1"\n', { mode: 0o755 })
  t.match(await createGit({ root: borrowing, log, limiter, gitPath: fake }), /too old/)
  fs.writeFileSync(fake, '#!/bin/sh\n[ "$2" = version ] && echo "git version 2.40.0" && exit 0\necho "fatal: not a repository" >&2; exit 128\n', { mode: 0o755 })
  t.match(await createGit({ root: borrowing, log, limiter, gitPath: fake }), /does not accept the repository: fatal: not a repository/)

  const saved = process.env.PATH
  t.teardown(() => { process.env.PATH = saved })
  // A relative PATH entry is never searched (it could be the workspace): here it is the only one holding git.
  process.env.PATH = path.relative(process.cwd(), path.dirname(fake))
  t.match(await createGit({ root: borrowing, log, limiter }), /git is not installed/)
  delete process.env.PATH
  t.match(await createGit({ root: borrowing, log, limiter }), /git is not installed/)
  process.env.PATH = saved
  t.type(await createGit({ root: borrowing, log, limiter }), 'object')
})

t.test('a git that fails without a word is a GIT_FAILED error, never a crash', async (t) => {
  const root = tempRoot(t)
  fs.mkdirSync(path.join(root, '.git'))
  const fake = path.join(tempRoot(t), 'git')
  // $1 is --no-pager; every command but version and rev-parse fails silently.
  fs.writeFileSync(fake, '#!/bin/sh\ncase "$2 $3" in\n  "version "*) echo "git version 2.40.0";;\n  "rev-parse --git-dir") echo .git;;\n  "cat-file -t") echo blob;;\n  *) exit 3;;\nesac\n', { mode: 0o755 })
  const service = await createGit({ root, log, limiter: createLimiter(), gitPath: fake })
  if (typeof service === 'string') throw new Error(service)
  await t.rejects(service.log({ from: 'a'.repeat(40), path: '', skip: 0, count: 1 }), { message: 'ERROR GIT_FAILED: git log failed: exit code 3.', next: { step: 'list-commits' } })
  t.equal(await service.fileAt('a'.repeat(40), 'x', 10), undefined, 'a blob git cannot read is no file')
})

t.test('git\'s own words in a GIT_FAILED error show no server path: the work tree as ".", any other as a placeholder', async (t) => {
  const root = tempRoot(t)
  fs.mkdirSync(path.join(root, '.git'))
  const fake = path.join(tempRoot(t), 'git')
  fs.writeFileSync(fake, '#!/bin/sh\ncase "$2 $3" in\n  "version "*) echo "git version 2.40.0";;\n  "rev-parse --git-dir") echo .git;;\n  *) echo "fatal: cannot read \'/home/alice/.config/git/attributes\' for $GIT_WORK_TREE/sub" >&2; exit 128;;\nesac\n', { mode: 0o755 })
  const service = await createGit({ root, log, limiter: createLimiter(), gitPath: fake })
  if (typeof service === 'string') throw new Error(service)

  await t.rejects(service.log({ from: 'a'.repeat(40), path: '', skip: 0, count: 1 }), { message: "ERROR GIT_FAILED: git log failed: fatal: cannot read '(a server path)' for ./sub." })
})

t.test('any ref text either names a commit, is refused, or is not found: never an option, never a file read', async (t) => {
  const root = tempRoot(t)
  fs.writeFileSync(path.join(root, 'f.txt'), 'f\n')
  commitAll(root, 'one')
  git(root, ['tag', 'v1'])
  const service = await serviceFor(root)
  const head = await service.resolveCommit('HEAD', 'ref')
  t.match(head, /^[0-9a-f]{40}$/)
  t.equal(await service.resolveCommit('v1', 'ref'), head)
  t.equal(await service.resolveCommit(head.slice(0, 7), 'ref'), head)
  const probe = path.join(tempRoot(t), 'written')
  const hostile = ['--output=' + probe, '-p', '--all', 'HEAD:f.txt', ':/one', 'HEAD..HEAD', 'a b', 'x\n', '\\', '', 'x'.repeat(201), '@{-1}', 'HEAD^{/one}', '--end-of-options']
  for (const ref of hostile) {
    const err = await service.resolveCommit(ref, 'ref').then(() => undefined, (e: Error) => e.message)
    if (err === undefined) t.pass(`${JSON.stringify(ref)} names a commit`)
    else t.match(err, /^ERROR (INVALID_ARGUMENT|REF_NOT_FOUND): ref/, JSON.stringify(ref))
  }
  t.notOk(fs.existsSync(probe), 'an option-like ref wrote nothing')
  await fc.assert(fc.asyncProperty(fc.string({ maxLength: 40 }), async (ref) => {
    const outcome = await service.resolveCommit(ref, 'ref').then(hash => hash === head ? 'head' : 'other', (e: Error) => /^ERROR (INVALID_ARGUMENT|REF_NOT_FOUND)/.test(e.message) ? 'refused' : e.message)
    return outcome === 'head' || outcome === 'refused'
  }), { numRuns: 150 })
  t.notOk(fs.existsSync(probe))
})

t.test('history is parsed exactly: renames, binaries, merges, the root commit, odd names', async (t) => {
  const root = tempRoot(t)
  fs.writeFileSync(path.join(root, 'a b.txt'), 'alpha\nbeta\ngamma\ndelta\n')
  fs.writeFileSync(path.join(root, 'bin.dat'), Buffer.from([0, 1, 2, 3]))
  commitAll(root, 'root commit\n\nwith a body', '2024-01-01T00:00:00Z')
  git(root, ['checkout', '-q', '-b', 'side'])
  git(root, ['mv', 'a b.txt', 'renamed é.txt'])
  fs.writeFileSync(path.join(root, 'bin.dat'), Buffer.from([0, 9, 9]))
  git(root, ['commit', '-q', '-am', 'rename and binary'], '2024-01-02T00:00:00Z')
  git(root, ['checkout', '-q', 'main'])
  fs.writeFileSync(path.join(root, 'main.txt'), 'm\n')
  git(root, ['add', 'main.txt'])
  git(root, ['commit', '-q', '-m', 'main work'], '2024-01-03T00:00:00Z')
  git(root, ['merge', '-q', '--no-ff', '-m', 'merge side', 'side'], '2024-01-04T00:00:00Z')
  const service = await serviceFor(root)
  const head = await service.resolveCommit('HEAD', 'ref')

  const commits = await service.log({ from: head, path: '', skip: 0, count: 10 })
  t.same(commits.map(c => c.subject), ['merge side', 'main work', 'rename and binary', 'root commit'])
  t.equal(commits[0].parents.length, 2)
  t.same(commits[3].parents, [])
  t.match(commits[3], { author: 'Alice', email: 'alice@example.com', date: '2024-01-01T00:00:00+00:00' })
  t.same((await service.log({ from: head, path: 'a b.txt', skip: 0, count: 10 })).map(c => c.subject), ['rename and binary', 'root commit'], 'a path that no longer exists has history')
  t.same((await service.log({ from: head, path: '', author: 'ALICE@', grep: 'MAIN', skip: 0, count: 10 })).map(c => c.subject), ['main work'])
  t.same((await service.log({ from: head, path: '', since: '2024-01-02T12:00:00Z', until: '2024-01-03T12:00:00Z', skip: 0, count: 10 })).map(c => c.subject), ['main work'])
  t.same((await service.log({ from: head, path: '', skip: 1, count: 1 })).map(c => c.subject), ['main work'])

  const merge = await service.commitChanges(head, '')
  t.same(merge.map(c => [c.status, c.oldPath, c.path, c.added]), [['M', undefined, 'bin.dat', null], ['R', 'a b.txt', 'renamed é.txt', 0]], 'a merge against its first parent')
  t.equal(merge[1].similarity, 100)
  const rootChanges = await service.commitChanges(commits[3].hash, '')
  t.same(rootChanges.map(c => [c.status, c.path, c.added, c.deleted]), [['A', 'a b.txt', 4, 0], ['A', 'bin.dat', null, null]])
  t.same((await service.commitChanges(commits[3].hash, 'bin.dat')).map(c => c.path), ['bin.dat'])
  const detail = await service.commit(commits[3].hash)
  t.equal(detail.message, 'root commit\n\nwith a body')
  t.equal(detail.subject, 'root commit')
  t.equal(detail.committer, 'Alice')

  const patches = await service.diffPatch({ from: commits[3].hash, to: head, path: ['a b.txt', 'renamed é.txt', 'bin.dat'] }, 0)
  t.equal(patches.length, 2)
  t.match(patches[0], /Binary files/)
  t.match(patches[1], /rename from a b\.txt/)
  t.same((await service.diffChanges({ from: head, to: head, path: '' })), [])
  t.equal(await service.lineCount(head, 'renamed é.txt'), 4)
  t.equal(await service.lineCount(head, 'missing'), undefined)
  fs.writeFileSync(path.join(root, 'no-newline.txt'), 'a\nb')
  fs.writeFileSync(path.join(root, 'empty.txt'), '')
  git(root, ['add', 'no-newline.txt', 'empty.txt'])
  git(root, ['commit', '-qm', 'edge files'], '2024-01-05T00:00:00Z')
  t.equal(await service.lineCount(await service.resolveCommit('HEAD', 'ref'), 'no-newline.txt'), 2)
  t.equal(await service.lineCount(await service.resolveCommit('HEAD', 'ref'), 'empty.txt'), 0)
  t.equal(await service.fileAt(head, '.', 10), undefined, 'a tree is not a file')
  const cut = await service.fileAt(head, 'renamed é.txt', 3)
  t.same(cut, { bytes: Buffer.from('alp'), truncated: true })
  const blame = await service.blame(head, 'renamed é.txt', 2, 3)
  t.same(blame.map(l => [l.line, l.text, l.summary, l.date]), [[2, 'beta', 'root commit', '2024-01-01T00:00:00Z'], [3, 'gamma', 'root commit', '2024-01-01T00:00:00Z']])
  await t.rejects(service.blame(head, 'renamed é.txt', 9, 10), { message: /^ERROR GIT_FAILED: git blame failed: fatal: file .* has only 4 lines/ })
  await t.rejects(service.commit('0'.repeat(40)), { message: /^ERROR GIT_FAILED: git show failed/ })
  await t.rejects(service.log({ from: '0'.repeat(40), path: '', skip: 0, count: 1 }), { message: /^ERROR GIT_FAILED: git log failed/ })
  await t.rejects(service.commitChanges('0'.repeat(40), ''), { message: /^ERROR GIT_FAILED: git show failed/ })
  await t.rejects(service.diffPatch({ from: '0'.repeat(40), path: '' }, 3), { message: /^ERROR GIT_FAILED: git diff failed/ })
})

t.test('a run is bounded: byte cap, cancellation', async (t) => {
  const root = tempRoot(t)
  fs.writeFileSync(path.join(root, 'big.txt'), 'x'.repeat(200_000))
  commitAll(root, 'big')
  const target = { gitPath: 'git', gitDir: path.join(root, '.git'), workTree: root }
  const capped = await runGit(target, ['cat-file', 'blob', 'HEAD:big.txt'], { maxBytes: 1000 })
  t.match(capped, { truncated: true, aborted: false })
  t.equal(capped.stdout.length, 1000)
  const controller = new AbortController()
  controller.abort()
  t.match(await runGit(target, ['log'], { signal: controller.signal }), { aborted: true, code: null })
  const later = new AbortController()
  const running = runGit(target, ['cat-file', 'blob', 'HEAD:big.txt'], { signal: later.signal })
  later.abort()
  t.match(await running, { aborted: true })
  t.match(await runGit({ ...target, gitPath: '/nonexistent/git' }, ['log']), { code: -2, stderr: 'git could not be started' })

  const service = await serviceFor(root)
  const head = await service.resolveCommit('HEAD', 'ref')
  const gone = new AbortController()
  gone.abort()
  await t.rejects(service.commit(head, gone.signal), { message: /CANCELLED/ })
})

t.test('the repositories of several roots: each by name; none at all is one reason naming every root', async (t) => {
  const fake = { version: '2.43.0' } as unknown as GitService
  const some = gitRepositories([{ name: 'app', git: fake }, { name: 'docs', git: 'no .git folder' }])
  if (typeof some === 'string') throw new Error(some)
  t.equal(some.of('app'), fake)
  t.equal(some.of('docs'), 'no .git folder')
  t.same(some.names, ['app'])
  t.equal(gitRepositories([{ name: 'app', git: 'git is not installed' }]), 'git is not installed', 'one root: its reason as it is')
  t.equal(gitRepositories([{ name: 'app', git: 'no .git folder' }, { name: 'docs', git: 'a linked work tree' }]), 'app: no .git folder; docs: a linked work tree')
})
