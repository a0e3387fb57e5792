// `npm run bench -- --only outlines`: our outlines (the built dist/src) against universal-ctags over whole real
// trees — Linux 6.1 for C (bench/corpus.sh), this repository's src/ for TypeScript (where the TypeScript
// compiler is the second oracle: ctags 5.9 gives no end lines there), a Python standard library for Python.
// Per language: the oracle's functions we find, with the same start (the line of the name), the same end line and
// the same owner, and how many of ours a function owns (never right in C).
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { createTally, ourFunctions, TALLY_HEADER, tallyExamples, tallyRow } from './outline-compare.js'
import { compilerFunctions, ctagsFunctions } from './outline-oracles.js'

const here = path.dirname(fileURLToPath(import.meta.url))
const REPO = path.join(here, '..', '..')
const LINUX = path.join(here, '..', '.corpus', 'linux-source-6.1')
// BENCH_OUTLINE_DIST measures another build's outlines (its dist/ folder), e.g. an older commit's.
const symbolsDist = path.join(process.env.BENCH_OUTLINE_DIST ?? path.join(REPO, 'dist'), 'src', 'services', 'symbols', 'index.js')
/** The Linux folders measured unless BENCH_OUTLINE_LINUX=whole. */
const LINUX_PARTS = ['kernel', 'mm', 'net/core', 'fs/ext4', 'include/linux']
/** A Python standard library we do not maintain: Debian's, else a pyenv one. */
const PYTHON_TREES = ['/usr/lib/python3.11', '/root/.pyenv/versions/3.11.7/lib/python3.11', '/usr/lib/python3.12', '/usr/lib/python3.13']

/** Files under `roots` with one of `extensions`, no links followed, sorted; at most `maxBytes` each. */
function filesUnder (roots, extensions, maxBytes) {
  const found = []
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name)
      if (entry.isDirectory()) walk(full)
      else if (entry.isFile() && extensions.includes(path.extname(entry.name)) && statSync(full).size <= maxBytes) found.push(full)
    }
  }
  for (const root of roots) walk(root)
  return found.sort()
}

/**
 * Parses every file on `threads` of the product's parser threads and hands each one's functions (and lines) to
 * `each` as it is done: nothing of a file is kept after it (the whole Linux tree is 850 MB of text).
 */
async function eachOutline (files, threads, each) {
  const { buildOutline, createSymbolParser, locateTreeSitter, symbolLanguageOf } = await import(pathToFileURL(symbolsDist).href)
  const parsers = Array.from({ length: threads }, () => createSymbolParser(locateTreeSitter()))
  let next = 0
  try {
    await Promise.all(parsers.map(async (parser) => {
      while (next < files.length) {
        const file = files[next++]
        const text = readFileSync(file, 'utf8')
        const lines = text.split('\n')
        const { definitions } = await parser.definitions(text, symbolLanguageOf(file))
        each(file, ourFunctions(buildOutline(definitions, lines), definitions), lines)
      }
    }))
  } finally {
    await Promise.all(parsers.map(p => p.close()))
  }
}

/** The corpora measured: label, the files, the root their paths are shown from. */
async function corpora (log) {
  const { MAX_SOURCE_BYTES } = await import(pathToFileURL(symbolsDist).href)
  const list = []
  if (existsSync(path.join(LINUX, 'Makefile'))) {
    const whole = process.env.BENCH_OUTLINE_LINUX === 'whole'
    const roots = whole ? [LINUX] : LINUX_PARTS.map(p => path.join(LINUX, p))
    list.push({ language: 'C', label: `C: Linux 6.1 ${whole ? 'whole tree' : LINUX_PARTS.map(p => `${p}/`).join(', ')}`, root: LINUX, files: filesUnder(roots, ['.c', '.h'], MAX_SOURCE_BYTES) })
  } else {
    log('outlines: the Linux tree is missing (bench/corpus.sh): C is not measured')
  }
  list.push({ language: 'TypeScript', label: 'TypeScript: this repository\'s src/', root: REPO, files: filesUnder([path.join(REPO, 'src')], ['.ts'], MAX_SOURCE_BYTES) })
  const python = PYTHON_TREES.find(p => existsSync(path.join(p, 'os.py')))
  if (python !== undefined) list.push({ language: 'Python', label: `Python: ${python}`, root: python, files: filesUnder([python], ['.py'], MAX_SOURCE_BYTES) })
  else log('outlines: no Python standard library found: Python is not measured')
  return list
}

/** Runs the section; resolves with its rows (C judged against the goals of issue 41) and its Markdown. */
export async function runOutlineBench (log, { threads = 2 } = {}) {
  const rows = []
  const table = [...TALLY_HEADER]
  const details = []
  for (const corpus of await corpora(log)) {
    log(`outlines: ${corpus.label}, ${corpus.files.length} files`)
    const oracles = [['universal-ctags', await ctagsFunctions(corpus.language, corpus.files)]]
    if (corpus.language === 'TypeScript') oracles.push(['the TypeScript compiler', compilerFunctions(corpus.files, REPO)])
    const tallies = oracles.map(() => createTally())
    await eachOutline(corpus.files, threads, (file, ours, lines) => {
      oracles.forEach(([, functions], k) => tallies[k].add(path.relative(corpus.root, file), functions.get(file) ?? [], ours, lines))
    })
    oracles.forEach(([oracleName], k) => {
      const tally = tallies[k]
      table.push(tallyRow(corpus.label, oracleName, tally))
      details.push(tallyExamples(corpus.label, oracleName, tally))
      const right = tally.oracle - tally.misread
      const share = (n, whole = right) => `${(100 * n / whole).toFixed(2)} %`
      // Ends are compared where the oracle gives one: ctags gives none for a Python lambda.
      const withEnds = right - tally.endless
      const c = corpus.language === 'C'
      rows.push({
        name: `outlines, ${corpus.label} (${corpus.files.length} files) against ${oracleName}: its functions found, with the same end line`,
        measured: `found ${share(tally.found)} of the ${right} it reads right (${tally.misread} misread), same end ${tally.ends === 0 ? 'n/a' : `${share(tally.end, withEnds)} of the ${withEnds} of those with an end line`}; ${tally.ownedByFunction} of ours owned by a function`,
        baseline: `${oracleName}: ${tally.oracle} functions`,
        goal: c ? '≥ 99.9 % same end, 0 owned by a function (issue 41)' : 'info',
        pass: c ? tally.end >= 0.999 * withEnds && tally.ownedByFunction === 0 : undefined
      })
    })
  }
  return { rows, markdown: ['## Outlines against ctags (and the TypeScript compiler)', '', ...table, '', OUTLINE_NOTE, '', ...details.flatMap(d => [d, ''])].join('\n') }
}

const OUTLINE_NOTE = 'Shares are of the oracle\'s functions it reads right (of all of them in brackets), the same end of those it gives an end line (ctags gives none for a Python lambda); a misread is one of two shapes, each ' +
  'checked against one of our functions ending where the oracle\'s does. The start is the line of the name. "Ours owned by a function": ' +
  'a function or method whose owner is a function — never right in C; closures in TypeScript and Python.'
