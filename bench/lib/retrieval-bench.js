// `npm run bench -- --only retrieval`: does the right code come first? Questions written by reading the code
// (bench/retrieval/*.json: folders of the Linux 6.1 tree, this repository's src/, twelve JavaScript
// libraries of its node_modules, Debian's Python 3.11 standard library), asked of search_code, search_semantic (with
// a real embedding model: see embedding-provider.js), the vectors alone, and two ripgrep baselines, in one run. A
// third of the questions is held out: never tuned on, reported apart; every figure also per set and kind of question.
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { benchProvider, embedText } from './embedding-provider.js'
import { untilEmbedded } from './embedded-wait.js'
import { DEPTH, rankOf, rgByCount, rgInPathOrder, specificWord, tokensOf } from './retrieval-measures.js'
import { retrievalReport } from './retrieval-report.js'
import { copyTree, missingTree, SOURCES, versionNote } from './retrieval-trees.js'
import { indexFileIn, indexVectors, keepVectors, schemaOfBin, seedVectors } from './retrieval-vectors.js'
import { sharesNoWord } from './retrieval-words.js'
import { stdioServer } from './stdio-client.js'

const here = path.dirname(fileURLToPath(import.meta.url))
const repo = path.join(here, '..', '..')
const OWN_BIN = path.join(repo, 'dist', 'bin', 'cli.js')
const WORK = path.join(repo, 'bench', '.retrieval')
/** Pages of a ranked tool read before a question counts as not answered (the first ten files are what counts). */
const PAGES = 3

/** Throws, saying what to do, when a set's tree is not here at the versions its questions were written against. */
function refuseMissing (set) {
  const problem = missingTree(set)
  if (problem !== undefined) throw new Error(`${set.name}: ${problem}; or ask the other trees: BENCH_RETRIEVAL_TREES=<tree,…>`)
}

/**
 * The tree a question set is asked of: its folders copied (mtimes kept, so the index and the vectors of an
 * earlier run stay valid) into bench/.retrieval/<tree>. The Linux corpus is unpacked and copied once; the other
 * trees every run. A tree that is not here (or not at its set's versions) stops the run with what to do.
 */
function workspaceOf (set) {
  const tree = path.join(WORK, 'trees', set.tree)
  if (set.tree === 'linux-source-6.1') {
    if (!existsSync(path.join(SOURCES[set.tree], 'Makefile'))) execFileSync('sh', [path.join(repo, 'bench', 'corpus.sh')], { stdio: ['ignore', 'ignore', 'inherit'] })
    if (existsSync(path.join(tree, '.complete'))) return tree
  }
  refuseMissing(set)
  copyTree(set, tree)
  execFileSync('touch', [path.join(tree, '.complete')])
  return tree
}

/** The pages of a ranked tool until an answer shows (at most PAGES): the files in order and the tokens read. */
async function askTool (server, name, query, answers) {
  const files = []
  let tokens = 0
  for (let page = 0; page < PAGES; page++) {
    const { result, error } = await server.call('tools/call', { name, arguments: { query, page_size: 10, offset: page * 10 } })
    if (error !== undefined || result.isError) throw new Error(`${name} "${query}": ${error?.message ?? result.content[0].text}`)
    tokens += tokensOf(result.content.map(c => c.text ?? '').join('\n'))
    files.push(...result.structuredContent.results.map(r => r.path))
    const rank = rankOf(files, answers)
    if (rank !== undefined) return { rank, tokens }
    if (result.structuredContent.pagination.next_offset === undefined) break
  }
  return { rank: undefined, tokens: undefined }
}

/** The index file a server wrote into `state` (one set of roots per state folder here). */
function indexFileOf (state) {
  const name = readdirSync(state).find(n => /^index-[0-9a-f]{16}\.sqlite$/.test(n))
  if (name === undefined) throw new Error(`no index in ${state}`)
  return path.join(state, name)
}

/** Ranks by the vectors alone: every chunk's vector in the index against the query's, exact cosine, files (as the tree shows them) best first. */
async function vectorRanker (state, tree, provider) {
  const { DatabaseSync } = await import('@photostructure/sqlite')
  const db = new DatabaseSync(indexFileOf(state), { readOnly: true })
  const vectors = indexVectors(db, tree, provider.model, provider.dims)
  db.close()
  return async (query) => {
    const q = await embedText(provider, query)
    const norm = Math.hypot(...q)
    const scored = vectors.map(({ path, vector: v }) => {
      let dot = 0
      let vn = 0
      for (let d = 0; d < v.length; d++) { dot += v[d] * q[d]; vn += v[d] * v[d] }
      return { path, score: dot / (Math.sqrt(vn) * norm || 1) }
    })
    scored.sort((a, b) => b.score - a.score)
    return scored.slice(0, 200).map(s => s.path)
  }
}

/**
 * Asks every question of one set by every method (`split`: the tuning questions only, or all); returns one record
 * per question. The server is `bin` (another build's, for a before/after figure: its own state folder, `label`).
 */
async function runSet (set, provider, log, { bin, label, split }) {
  const tree = workspaceOf(set)
  const state = path.join(WORK, label === undefined ? 'state' : `state-${label}`, set.tree)
  const cache = path.join(WORK, 'vectors', `${set.tree}.sqlite`)
  mkdirSync(state, { recursive: true })
  // The vectors of an index this server would rebuild (another schema), or of the main state folder's index for another build's.
  const seeded = await seedVectors(state, cache, await schemaOfBin(bin), label === undefined ? undefined : indexFileIn(path.join(WORK, 'state', set.tree)))
  if (seeded !== undefined) log(`retrieval: ${set.tree}: a new index for this build's schema, holding ${seeded} cached vectors`)
  const server = stdioServer(bin, tree, ['--state-dir', state, '--tool-timeout-ms', '600000', '--embeddings-url', provider.url, '--embeddings-model', provider.model],
    provider.key === undefined ? {} : { WORKSPACE_MCP_EMBEDDINGS_API_KEY: provider.key })
  try {
    await server.initialize()
    log(`retrieval: ${set.name}, ${set.tree} (${set.folders.length} folders): index and embed`)
    const { info, ms } = await untilEmbedded(server, { limitMs: 60 * 60_000, log, label: set.tree, whole: false })
    log(`  ready in ${Math.round(ms / 1000)} s: ${info.code_index.files} files, ${info.code_index.chunks} chunks, ${info.embeddings.vectors} vectors`)
    const vectors = await vectorRanker(state, tree, provider)
    const records = []
    for (const q of set.questions.filter(q => split === 'all' || q.held_out !== true)) {
      const answers = new Set(q.answers.map(a => a.path))
      const word = specificWord(tree, q.question)
      const byCount = word === undefined ? { files: [], text: '' } : rgByCount(tree, word)
      const byPath = word === undefined ? { files: [], text: '' } : rgInPathOrder(tree, word)
      const record = {
        id: q.id,
        set: set.name,
        kind: q.kind,
        noSharedWord: sharesNoWord(q.question, q.answers),
        heldOut: q.held_out === true,
        word,
        code: await askTool(server, 'search_code', q.question, answers),
        semantic: await askTool(server, 'search_semantic', q.question, answers),
        vectors: { rank: rankOf(await vectors(q.question), answers), tokens: undefined },
        rgCount: { rank: rankOf(byCount.files, answers), tokens: rankOf(byCount.files, answers) === undefined ? undefined : tokensOf(byCount.text) },
        rgPath: { rank: rankOf(byPath.files, answers), tokens: rankOf(byPath.files, answers) === undefined ? undefined : tokensOf(byPath.text) }
      }
      records.push(record)
      if (!record.heldOut) log(`  ${q.id}: code ${record.code.rank ?? '-'} semantic ${record.semantic.rank ?? '-'} vectors ${record.vectors.rank ?? '-'} rg(${word}) ${record.rgCount.rank ?? '-'}`)
    }
    return { name: set.name, tree: set.tree, folders: set.folders, note: versionNote(set), files: info.code_index.files, chunks: info.code_index.chunks, vectors: info.embeddings.vectors, records }
  } finally {
    server.child.stdin.end()
    await new Promise(resolve => server.child.once('exit', resolve))
    await keepVectors(state, cache)
  }
}

/**
 * Runs the section: report rows (goals on the held-out questions) and the Markdown of every figure. `split`
 * 'tuning' asks only the questions ranking work may be tuned on (held-out ones are never asked, so never seen);
 * `bin` and `label`: another build's server (see runSet).
 */
export async function runRetrievalBench (log, { only, split = 'all', bin = OWN_BIN, label } = {}) {
  if (!['all', 'tuning'].includes(split)) throw new Error(`BENCH_RETRIEVAL_SPLIT=${split}: 'tuning' (the questions not held out) or 'all'`)
  if (!existsSync(bin)) throw new Error(`${bin} is missing: npm run build`)
  const sets = readdirSync(path.join(repo, 'bench', 'retrieval')).filter(n => n.endsWith('.json')).sort()
    .map(n => ({ name: n.replace(/\.json$/, ''), ...JSON.parse(readFileSync(path.join(repo, 'bench', 'retrieval', n), 'utf8')) }))
    .filter(set => only === undefined || only.includes(set.tree) || only.includes(set.name))
  // Before the first tree is indexed (minutes): a missing tree stops the run now, not after the others. Linux 6.1 is
  // unpacked on demand by bench/corpus.sh.
  for (const set of sets.filter(s => s.tree !== 'linux-source-6.1')) refuseMissing(set)
  const provider = await benchProvider(log)
  try {
    const results = []
    for (const set of sets) results.push(await runSet(set, provider, log, { bin, label, split }))
    return retrievalReport(results, provider, DEPTH, { split, label })
  } finally {
    await provider.close()
  }
}
