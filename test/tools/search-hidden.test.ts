// Ignore rules that hide what was asked for (issue 7, item 7): Debian's linux-source tarball ends its
// .gitignore with `/*`, so a search answered "No matches." where ripgrep finds thousands of files.
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import t, { type Test } from 'tap'
import pino from 'pino'
import { createSearch } from '../../src/services/search/search.js'
import { createTokenizer } from '../../src/services/tokenizer/tokenizer.js'
import { createWorkspace } from '../../src/services/workspace/workspace.js'
import { searchRegex } from '../../src/tools/search-regex.js'
import { listDirectory } from '../../src/tools/list-directory.js'
import { findFiles } from '../../src/tools/find-files.js'
import { textOf, toolContext } from '../helpers/workspace-fixture.js'

const log = pino({ level: 'silent' })

/** A tree like the unpacked tarball: a root .gitignore that ends with `/*` (after comments and other rules). */
async function tarballLike (t: Test, files: Record<string, string>) {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'wmcp-hidden-')))
  t.teardown(() => fs.rmSync(root, { recursive: true, force: true }))
  for (const [file, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true })
    fs.writeFileSync(path.join(root, file), text)
  }
  const workspace = await createWorkspace({ root, log })
  const search = await createSearch({ workspace, log })
  const tokenizer = createTokenizer()
  t.teardown(() => {
    search.close()
    tokenizer.close().catch(() => {})
  })
  const run = (args: Record<string, unknown>) => searchRegex.run({ search, tokenizer, ...args } as Parameters<typeof searchRegex.run>[0], toolContext())
  return { root, run, workspace }
}

const KERNEL = {
  '.gitignore': '# comment\n*.o\n\n# everything else is generated\n/*\n!/README\n',
  README: 'Linux kernel\n',
  'mm/slab.c': 'void *kmalloc(size_t size);\n',
  'mm/slub.c': 'return kmalloc(n);\n',
  'drivers/net/e1000.c': 'buf = kmalloc(len, GFP_KERNEL);\n'
}

t.test('a search the ignore rules empty says so: how many files, which rule (file:line), and the exact call', async (t) => {
  const { run } = await tarballLike(t, KERNEL)

  const result = await run({ pattern: 'kmalloc' })
  const text = textOf(result)

  t.match(text, /^0 matching lines in 0 files for \/kmalloc\//)
  t.match(text, /> note: 3 more matching files excluded by ignore rules \(e\.g\. drivers\/net\/e1000\.c, hidden by \.gitignore:5 "\/\*"\) — to search them: search_regex pattern="kmalloc" respect_gitignore=false\n/)
  t.match(text, /No matches in the files the ignore rules leave in/)
  t.notMatch(text, /^No matches\.$/m)
  t.match(result.structuredContent, { notices: [/3 more matching files excluded by ignore rules/] })
})

t.test('the suggested call finds them, and says nothing more about ignore rules', async (t) => {
  const { run } = await tarballLike(t, KERNEL)

  const result = await run({ pattern: 'kmalloc', respect_gitignore: false, output_mode: 'files' })
  const text = textOf(result)

  t.match(text, /^3 files match \/kmalloc\//)
  t.match(text, /\ndrivers\/net\/e1000\.c\nmm\/slab\.c\nmm\/slub\.c\n/)
  t.notMatch(text, /ignore rules/)
  t.match(text, /Results 1–3 of 3 \| next: none/)
})

t.test('the rule named is the one that decides: a nested .gitignore, and a folder rule that hides a whole tree', async (t) => {
  const { run } = await tarballLike(t, {
    '.gitignore': 'build/\n',
    'src/.gitignore': 'generated-*.ts\n',
    'src/main.ts': 'const token = 1\n',
    'src/generated-api.ts': 'export const token = 2\n',
    'build/out.js': 'var token = 3\n'
  })

  const text = textOf(await run({ pattern: 'token', output_mode: 'files' }))

  t.match(text, /^1 file matches \/token\//)
  t.match(text, /2 more matching files excluded by ignore rules \(e\.g\. build\/out\.js, hidden by \.gitignore:1 "build\/"\) — to search them: search_regex pattern="token" output_mode="files" respect_gitignore=false/)
  const nested = textOf(await run({ pattern: 'export const token', path: 'src' }))
  t.match(nested, /1 more matching file excluded by ignore rules \(e\.g\. src\/generated-api\.ts, hidden by src\/\.gitignore:1 "generated-\*\.ts"\) — to search them: search_regex pattern="export const token" path="src" respect_gitignore=false/)
})

t.test('no note when the rules hide nothing that matches, or when the answer is already large', async (t) => {
  const many: Record<string, string> = { '.gitignore': 'vendor/\n', 'vendor/lib.c': 'needle\n' }
  for (let i = 0; i < 25; i++) many[`src/f${String(i).padStart(2, '0')}.c`] = 'needle\n'
  const { run } = await tarballLike(t, many)

  t.notMatch(textOf(await run({ pattern: 'haystack' })), /ignore rules/, 'nothing hidden matches: a plain "No matches."')
  t.match(textOf(await run({ pattern: 'haystack' })), /\nNo matches\.\n/)
  t.notMatch(textOf(await run({ pattern: 'needle', output_mode: 'files' })), /ignore rules/, '25 files found: no second pass')
})

t.test('list_directory and find_files say when ignore rules exclude most of a folder, with the rule and the call past it', async (t) => {
  const { workspace } = await tarballLike(t, { ...KERNEL, Makefile: 'all:\n', COPYING: 'GPL\n' })

  const listing = textOf(await listDirectory.run({ workspace }, toolContext()))
  t.match(listing, /^# \. — 3 entries /, 'README and the two folders the rules leave unexpanded')
  t.match(listing, /\nNote: most of this folder is excluded by ignore rules: 2 gitignored entries not shown and 2 ignored folders not expanded \(e\.g\. COPYING, by \.gitignore:5 "\/\*"\) — to include them: list_directory path="\." respect_gitignore=false\n/)
  const all = textOf(await listDirectory.run({ workspace, respect_gitignore: false }, toolContext()))
  t.notMatch(all, /ignore rules/, 'the suggested call shows everything and says nothing more')
  t.match(all, /\nCOPYING {2}4 B\n/)

  const found = textOf(await findFiles.run({ workspace, patterns: ['**/*.c'] }, toolContext()))
  t.match(found, /^# 0 files match/)
  t.match(found, /\nNote: 2 ignored folders not searched \(e\.g\. drivers\/, by \.gitignore:5 "\/\*"\) — to include them: find_files patterns=\["\*\*\/\*\.c"\] path="\." respect_gitignore=false\n/)
  const past = textOf(await findFiles.run({ workspace, patterns: ['**/*.c'], respect_gitignore: false }, toolContext()))
  t.match(past, /^# 3 files match/)
  t.notMatch(past, /ignore/)
})

t.test('one hidden file takes the singular; past the bound of the probe the count is a lower bound', async (t) => {
  const one = await tarballLike(t, { '.gitignore': 'gen/\n', 'src/a.c': 'int x;\n', 'gen/b.c': 'kmalloc();\n' })
  t.match(textOf(await one.run({ pattern: 'kmalloc' })), /> note: 1 more matching file excluded by ignore rules \(e\.g\. gen\/b\.c, hidden by \.gitignore:1 "gen\/"\)/)

  const files: Record<string, string> = { '.gitignore': 'gen/\n', 'src/a.c': 'int x;\n' }
  for (let i = 0; i < 1005; i++) files[`gen/f${i}.c`] = 'kmalloc();\n'
  const many = await tarballLike(t, files)
  t.match(textOf(await many.run({ pattern: 'kmalloc' })), /> note: 1000\+ more matching files excluded by ignore rules/)
})
