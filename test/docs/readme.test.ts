import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { OWN_FLAGS, commandFlags, type CommandName } from '../../src/bin/command-flags.js'
import { splitArgs } from '../../src/bin/command-runtime.js'

// The README is read in five minutes; it and the documents it sends readers to point only at what exists: every
// relative link's file, and its heading when it names one; every npm script and workspace-mcp command line it shows.

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const DOCUMENTS = ['README.md', 'CONTRIBUTING.md', 'SECURITY.md', 'bench/README.md', ...fs.readdirSync(path.join(ROOT, 'docs')).filter(name => name.endsWith('.md')).map(name => `docs/${name}`)]
const read = (file: string): string => fs.readFileSync(path.join(ROOT, file), 'utf8')

/** GitHub's anchor for a heading: lower case, punctuation other than - and _ dropped, spaces to dashes. */
const slug = (heading: string): string => heading.trim().toLowerCase().replace(/[^\p{L}\p{N} _-]/gu, '').replace(/ /g, '-')
const anchorsOf = (text: string): Set<string> => new Set([...text.matchAll(/^#{1,6} (.+)$/gm)].map(m => slug(m[1].replace(/`/g, ''))))

t.test('the README fits in 300 lines, starting with the two set-up commands', async (t) => {
  const readme = read('README.md')
  const lines = readme.split('\n').length
  t.ok(lines <= 300, `${lines} lines`)
  t.match(readme, /```sh\nnpm ci && npm start[^\n]*\nnpm test[^\n]*~\d+ minutes on 2 cores/, 'run and test, and how long the second takes')
})

t.test('every relative link of the documents names a file that exists, and a heading of it that exists', async (t) => {
  for (const file of DOCUMENTS) {
    const text = read(file)
    for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^(https?|mailto):/.test(target)) continue
      const [where, anchor] = target.split('#')
      const resolved = where === '' ? path.join(ROOT, file) : path.join(ROOT, path.dirname(file), where)
      t.ok(fs.existsSync(resolved), `${file}: ${target} exists`)
      if (anchor !== undefined && anchor !== '' && resolved.endsWith('.md') && fs.existsSync(resolved)) {
        t.ok(anchorsOf(fs.readFileSync(resolved, 'utf8')).has(anchor), `${file}: ${target} names a heading there`)
      }
    }
  }
})

t.test('every npm script the README and CONTRIBUTING.md tell a reader to run exists', async (t) => {
  const scripts = Object.keys((JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts)
  for (const file of ['README.md', 'CONTRIBUTING.md']) {
    for (const [, name] of read(file).matchAll(/npm run ([\w:-]+)/g)) t.ok(scripts.includes(name), `${file}: npm run ${name}`)
  }
})

t.test('every workspace-mcp command line the documents show names a command that takes each flag it is given', async (t) => {
  let seen = 0
  for (const file of DOCUMENTS) {
    for (const line of read(file).split('\n')) {
      const found = /(?:workspace-mcp|dist\/bin\/cli\.js)["',\s]+(serve|stdio|index|tools|guide|check)\b(.*)$|npm start -- (.*)$/.exec(line)
      if (found === null) continue
      const command = (found[1] ?? 'serve') as CommandName
      // The line's words up to the end of its code span, comment, table cell or JSON array; an Inspector's own flags end it too.
      let words = (found[2] ?? found[3]).split(/[`#|\])]/)[0].replace(/"|,(?=\s|"|$)/g, ' ').split(/\s+/).filter(w => w !== '')
      if (line.includes('inspector') && words.includes('--method')) words = words.slice(0, words.indexOf('--method'))
      if (words.includes('--help')) continue
      seen++
      const { rest } = splitArgs(words, OWN_FLAGS[command])
      t.doesNotThrow(() => commandFlags(command, rest), `${file}: ${command} ${words.join(' ')}`)
    }
  }
  t.ok(seen >= 8, `${seen} command lines checked`)
})
