import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'

// The README is read in five minutes; it and the documents it sends readers to point only at what exists: every
// relative link's file, and its heading when it names one; every npm script it tells a reader to run.

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
  t.match(readme, /```sh\nnpm ci && npm start[^\n]*\nnpm test[^\n]*~4 minutes/, 'run and test, and how long the second takes')
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
