import fs from 'node:fs'
import path from 'node:path'
import pino from 'pino'
import t from 'tap'
import { createRegistry } from '../../src/mcp/registry/registry.js'
import { createSearch } from '../../src/services/search/search.js'
import { findFiles } from '../../src/tools/find-files.js'
import { getFileInfo } from '../../src/tools/get-file-info.js'
import { getWorkspaceInfo } from '../../src/tools/get-workspace-info.js'
import { gitDiff } from '../../src/tools/git-diff.js'
import { gitLog } from '../../src/tools/git-log.js'
import { gitShow } from '../../src/tools/git-show.js'
import { listDirectory } from '../../src/tools/list-directory.js'
import { readFiles } from '../../src/tools/read-files.js'
import { searchRegex } from '../../src/tools/search-regex.js'
import { git as gitCli } from '../helpers/git-repo.js'
import { CANARY, threeRoots } from '../helpers/roots.js'
import { textOf, toolContext } from '../helpers/workspace-fixture.js'

// The tools over three roots: paths in answers carry their root, the walking and searching tools cover
// every root by default, and a path (or `name:`) narrows them to one.

const structured = (result: { structuredContent?: Record<string, unknown> }): Record<string, any> => result.structuredContent as Record<string, any>

t.test('list_directory: the top lists the roots, a root lists itself, deeper levels by name under their folder', async (t) => {
  const { services } = await threeRoots(t)
  const top = await listDirectory.run({ workspace: services.workspace }, toolContext())
  t.same(structured(top).entries, ['app:/', 'docs:/', 'plain:/'])
  t.match(textOf(top), /^# \. — 3 entries .*\napp:\/ {2}\(\d+ entries\)\ndocs:\/ {2}\(\d+ entries\)\nplain:\/ {2}\(1 entry\)\n/)

  const deep = await listDirectory.run({ workspace: services.workspace, depth: 3 }, toolContext())
  t.match(textOf(deep), /\napp:\/\n {2}build\/ {2}\(ignored, not expanded\)\n {2}src\/\n {4}upload\.ts {2}\d+ B\n/)
  t.match(textOf(deep), /\n {2}to-app -> \[link, outside workspace\]\n/, 'a link into another root is outside its own')
  const second = await listDirectory.run({ workspace: services.workspace, depth: 3, offset: 3, page_size: 2 }, toolContext())
  t.match(textOf(second), /\napp:\/ {2}\(continued\)\n {2}src\/ {2}\(continued\)\n {4}upload\.ts/, 'a page starting deep repeats its folders')

  const docs = await listDirectory.run({ workspace: services.workspace, path: 'docs:' }, toolContext())
  t.same(structured(docs).entries, ['docs:guide/', 'docs:README.md', 'docs:to-app', 'docs:to-secret'])
  t.match(textOf(docs), /^# docs: — 4 entries/)
})

t.test('find_files: every root by default, globs matched within each root, a root by name', async (t) => {
  const { services } = await threeRoots(t)
  const all = await findFiles.run({ workspace: services.workspace, patterns: ['*.md', 'src/*.ts'] }, toolContext())
  t.same(structured(all).files, ['app:README.md', 'app:src/upload.ts', 'docs:README.md', 'docs:guide/intro.md'])
  const docs = await findFiles.run({ workspace: services.workspace, patterns: ['guide/*.md'], path: 'docs:' }, toolContext())
  t.same(structured(docs).files, ['docs:guide/intro.md'])
  const ignored = await findFiles.run({ workspace: services.workspace, patterns: ['*.js'] }, toolContext())
  t.match(textOf(ignored), /ignored folder not searched \(e\.g\. app:build\/, by app:\.gitignore:1 "build\/"\)/)
})

t.test('search_regex: every root in root order, one root by name, counted sets fetched per root', async (t) => {
  const { services } = await threeRoots(t)
  const all = await searchRegex.run({ ...services, pattern: 'needle' }, toolContext())
  t.match(textOf(all), /3 matching lines in 3 files/)
  t.same(textOf(all).match(/^## .*$/gm), ['## app:src/upload.ts', '## docs:guide/intro.md', '## plain:notes.txt'])
  t.notMatch(textOf(all), CANARY)

  const docs = await searchRegex.run({ ...services, pattern: 'needle', path: 'docs:' }, toolContext())
  t.same(textOf(docs).match(/^## .*$/gm), ['## docs:guide/intro.md'])
  const file = await searchRegex.run({ ...services, pattern: 'needle', path: 'plain:notes.txt', output_mode: 'count' }, toolContext())
  t.match(textOf(file), /plain:notes\.txt/)
  const hidden = await searchRegex.run({ ...services, pattern: 'in a build' }, toolContext())
  t.match(textOf(hidden), /app:build\/out\.js/, 'the rule-free probe names the hidden file in its root')
  t.match(textOf(hidden), /app:\.gitignore:1/)

  // A tiny collection cap: the app root's many matches are counted then fetched, the others streamed.
  fs.writeFileSync(path.join(services.workspace.roots[0].path, 'src', 'many.ts'), 'needle\n'.repeat(50))
  const search = await createSearch({ workspace: services.workspace, log: pino({ level: 'silent' }), limiter: services.limiter })
  const mixed = await searchRegex.run({ ...services, search, pattern: 'needle', page_size: 100 }, toolContext())
  t.match(textOf(mixed), /53 matching lines in 4 files/)
  t.same(textOf(mixed).match(/^## .*$/gm), ['## app:src/many.ts', '## app:src/upload.ts', '## docs:guide/intro.md', '## plain:notes.txt'])
  const tail = await searchRegex.run({ ...services, search, pattern: 'needle', page_size: 2, offset: 51 }, toolContext())
  t.same(textOf(tail).match(/^## .*$/gm), ['## docs:guide/intro.md', '## plain:notes.txt'])
})

t.test('read_files and get_file_info: any root by name, errors name the root', async (t) => {
  const { services } = await threeRoots(t)
  const read = await readFiles.run({ ...services, files: [{ path: 'docs:README.md' }, { path: 'README.md' }, { path: 'wiki:x' }, { path: 'docs:to-app' }] }, toolContext())
  const text = textOf(read)
  t.match(text, /### docs:README\.md — lines 1–1 of 1[^\n]*\n1\t# Docs\n/)
  t.match(text, /### app:README\.md — lines 1–1 of 1[^\n]*\n1\t# App\n/)
  t.match(text, /ERROR UNKNOWN_ROOT: files\[2\]\.path: "wiki:" names no served root/)
  t.match(text, /ERROR SYMLINK_ESCAPES_ROOT: files\[3\]\.path: "docs:to-app"/)
  const info = await getFileInfo.run({ ...services, paths: ['plain:notes.txt', 'docs:guide'] }, toolContext())
  t.match(structured(info).items, [{ path: 'plain:notes.txt', type: 'file', lines: 1 }, { path: 'docs:guide', type: 'dir' }])
})

t.test('get_workspace_info lists the roots by name and prefix, never their absolute paths', async (t) => {
  const { services, base } = await threeRoots(t)
  const registry = createRegistry({ tools: [getWorkspaceInfo], services })
  const result = await getWorkspaceInfo.run({ ...services, catalog: registry.services.catalog! }, toolContext())
  t.same(structured(result).roots, [{ name: 'app', path: 'app:' }, { name: 'docs', path: 'docs:' }, { name: 'plain', path: 'plain:' }])
  t.match(textOf(result), /Roots: `app:`, `docs:`, `plain:` — a path starts with its root \(e\.g\. "docs:README\.md"\); without one it is in `app`/)
  t.notMatch(JSON.stringify(result), base)
})

t.test('history: each root its own repository; paths in answers carry the root; a root without one says so', async (t) => {
  const { services, docs } = await threeRoots(t)
  fs.writeFileSync(path.join(docs, 'guide', 'intro.md'), '# Intro\n\nThe needle of the guide, revised.\n')
  gitCli(docs, ['commit', '-qam', 'Revise the intro'], '2024-02-01T12:00:00Z')
  fs.appendFileSync(path.join(docs, 'README.md'), 'uncommitted\n')

  const log = await gitLog.run({ ...services, path: 'docs:guide/intro.md' }, toolContext())
  t.same(structured(log).commits.map((c: { subject: string }) => c.subject), ['Revise the intro', 'Start the docs'])
  t.match(textOf(log), /^# History of docs:guide\/intro\.md from /)
  const first = await gitLog.run({ ...services }, toolContext())
  t.same(structured(first).commits.map((c: { subject: string }) => c.subject), ['Start the app'], 'no path: the first root')
  t.match(textOf(first), /^# History of app: from [0-9a-f]{12} \(HEAD\)\nOnly the first root's history; the others have their own: git_log path="docs:"\.\n/, 'named, never ".", and how to ask for the others')
  t.equal(structured(first).path, 'app:')

  const show = await gitShow.run({ ...services, path: 'docs:' }, toolContext())
  t.match(textOf(show), /\nM docs:guide\/intro\.md \(\+1 −1\)\n/)
  t.same(structured(show).files.map((f: { path: string }) => f.path), ['docs:guide/intro.md'])
  const show2 = await gitShow.run({ ...services, path: 'docs:', max_response_tokens: 1000, context_lines: 0 }, toolContext())
  t.match(textOf(show2), /docs:guide\/intro\.md/)
  const file = await gitShow.run({ ...services, path: 'docs:guide/intro.md', ref: 'HEAD~1', show: 'file' }, toolContext())
  t.match(textOf(file), /^# docs:guide\/intro\.md at [0-9a-f]{12}/)

  const diff = await gitDiff.run({ ...services, path: 'docs:' }, toolContext())
  t.match(textOf(diff), /\nM docs:README\.md \(\+1 −0\)\n/)
  t.same(structured(diff).files.map((f: { path: string }) => f.path), ['docs:README.md'])

  const none = await Promise.resolve(gitLog.run({ ...services, path: 'plain:notes.txt' }, toolContext())).catch((e: Error) => e)
  t.match(none, { toolCode: 'NOT_A_REPOSITORY', message: /path: the root "plain" has no history the server can read: .*Hint: name a path in a root that is a git repository, e\.g\. path="app:", path="docs:"/ })
})

t.test('path completion offers the roots, then continues inside the one a value names', async (t) => {
  const { services } = await threeRoots(t)
  const { completePaths } = await import('../../src/guide/path-completion.js')
  t.same(await completePaths(services.workspace, 'd'), ['docs:/'])
  t.same(await completePaths(services.workspace, 'docs:gu'), ['docs:guide/'])
  t.same(await completePaths(services.workspace, 'docs:guide/in'), ['docs:guide/intro.md'])
  t.same(await completePaths(services.workspace, 'src/up'), ['src/upload.ts'], 'no prefix: the first root')
  t.same(await completePaths(services.workspace, 'wiki:x'), [], 'an unknown root completes to nothing')
})
