import fs from 'node:fs'
import path from 'node:path'
import picomatch from 'picomatch'
import t from 'tap'
import { heldOutIds, KINDS } from '../../bench/lib/hold-out.js'
import { missingTree, SOURCES } from '../../bench/lib/retrieval-trees.js'

// The retrieval bench's questions (bench/retrieval/*.json) stay answerable and held out: every answer names a file of
// the tree that still holds its symbol as code spells a definition or a call (the question writers checked the
// definition), every question has a kind, a third of each set and of each kind is held out, ids are unique. This
// repository's answers move with its code, so a rename that strands one fails here, not silently in the bench; the
// other trees are checked wherever they are present at the versions the questions were written against.

interface Question { id: string, question: string, kind: string, answers: Array<{ path: string, symbol: string }>, why: string, held_out: boolean }
interface QuestionSet { tree: string, folders: string[], exclude?: string[], locked?: Record<string, string>, held_out_seed?: number, questions: Question[] }

const dir = 'bench/retrieval'
const sets = fs.readdirSync(dir).filter(n => n.endsWith('.json'))
  .map(n => ({ name: n.replace(/\.json$/, ''), set: JSON.parse(fs.readFileSync(path.join(dir, n), 'utf8')) as QuestionSet }))
const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
/** Marks made before kinds were tagged (linux, self) land within this of a third per kind; seeded sets are exact. */
const SLACK = 2.5

t.test('four sets or more over as many trees, ids unique, every question in words with a kind and one to three answers', async (t) => {
  const all = sets.flatMap(s => s.set.questions)
  t.ok(sets.length >= 4, `${sets.length} sets`)
  t.equal(new Set(sets.map(s => s.set.tree)).size, sets.length, 'one tree per set')
  t.equal(new Set(all.map(q => q.id)).size, all.length, 'ids unique')
  for (const q of all) {
    t.ok(q.question.length > 10 && q.why.length > 10, `${q.id}: a question and why its answer answers it`)
    t.ok((KINDS as readonly string[]).includes(q.kind), `${q.id}: kind ${q.kind} is one of ${KINDS.join(', ')}`)
    t.ok(q.answers.length >= 1 && q.answers.length <= 3 && q.answers.every(a => a.path.length > 0 && a.symbol.length > 0), `${q.id}: one to three answers, each a path and a symbol`)
    t.equal(typeof q.held_out, 'boolean', `${q.id}: held_out is set`)
  }
})

for (const { name, set } of sets) {
  t.test(`${name}: a third held out, per set and per kind`, async (t) => {
    const third = (questions: Question[]): string => `${questions.filter(q => q.held_out).length} of ${questions.length}`
    const off = (questions: Question[]): number => Math.abs(questions.filter(q => q.held_out).length - questions.length / 3)
    t.ok(off(set.questions) < SLACK, `${third(set.questions)} held out`)
    for (const kind of KINDS) {
      const own = set.questions.filter(q => q.kind === kind)
      t.ok(off(own) < SLACK, `${kind}: ${third(own)} held out`)
    }
    if (set.held_out_seed === undefined) return
    // A set drawn with a seed is drawn again here: its marks are the draw's, and none was moved after.
    const drawn = heldOutIds(set.questions, set.held_out_seed)
    t.same(set.questions.filter(q => q.held_out).map(q => q.id), set.questions.filter(q => drawn.has(q.id)).map(q => q.id), `the held-out marks are seed ${set.held_out_seed}'s draw`)
    t.ok(set.questions.length >= 30, `${set.questions.length} questions`)
    t.ok(set.questions.filter(q => q.kind === 'reworded').length >= set.questions.length / 3, 'a third or more worded without the code\'s words')
  })

  const problem = missingTree(set)
  t.test(`${name}: every answer is a file in the tree's folders that still holds its symbol`, { skip: problem ?? false }, async (t) => {
    const root = SOURCES[set.tree]
    const excluded = picomatch(set.exclude ?? [])
    for (const q of set.questions) {
      for (const { path: file, symbol } of q.answers) {
        t.ok(set.folders.some(f => file === f || file.startsWith(`${f}/`)) && !excluded(file), `${q.id}: ${file} is in ${set.folders.join(', ')} and not left out of the copy`)
        const text = fs.readFileSync(path.join(root, file), 'utf8')
        const name = escape(symbol.replace(/^(struct|union|enum) /, ''))
        // The name after a defining keyword, or before `(`, `=`, `:`, `[`, `<`, `{` (a definition, or a call).
        const defined = new RegExp(`(^|\\n)[^\\n;]*(\\b(function|class|interface|type|const|let|var|struct|union|enum|#define|async|def)\\s+\\**${name}\\b|\\b${name}\\s*(\\(|=|:|\\[|<|\\{)|^${name}\\b)`, 'm')
        t.match(text, defined, `${q.id}: ${file} holds ${symbol}`)
      }
    }
  })
}

t.test('the JavaScript libraries are pinned to the versions package-lock.json locks', async (t) => {
  const lock = JSON.parse(fs.readFileSync('package-lock.json', 'utf8')) as { packages: Record<string, { version: string }> }
  const set = sets.find(s => s.set.tree === 'js-libraries')?.set
  t.ok(set !== undefined, 'a set over js-libraries')
  const packages = new Set((set?.folders ?? []).map(f => f.split('/')[0]))
  t.same([...packages].sort(), Object.keys(set?.locked ?? {}).sort(), 'every package copied is pinned')
  for (const [name, version] of Object.entries(set?.locked ?? {})) t.equal(lock.packages[`node_modules/${name}`]?.version, version, `${name} ${version}`)
})

t.test('a tree at other versions than its questions were written against is refused, saying what to run', async (t) => {
  const js = sets.find(s => s.set.tree === 'js-libraries')?.set as QuestionSet
  t.match(missingTree({ ...js, locked: { ...js.locked, fastify: '0.0.1' } }), /fastify 0\.0\.1 wanted, .* installed, .* in package-lock\.json \(run npm ci/)
  t.match(missingTree({ ...js, folders: ['no-such-package/lib'] }), /no-such-package\/lib is missing \(run npm ci/)
  t.match(missingTree({ tree: 'nowhere', folders: ['a'] }), /unknown tree "nowhere"/)
})
