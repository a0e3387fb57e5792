import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'

// The retrieval bench's questions (bench/retrieval/*.json) stay answerable: every answer names a file of the tree
// that still holds its symbol as code spells a definition or a call (the question writers checked the definition), a third is held out, ids are unique. This repository's answers move with its code, so
// a rename that strands one fails here, not silently in the bench.

interface Question { id: string, question: string, answers: Array<{ path: string, symbol: string }>, held_out: boolean }
interface QuestionSet { tree: string, folders: string[], questions: Question[] }

const dir = 'bench/retrieval'
const sets = fs.readdirSync(dir).filter(n => n.endsWith('.json')).map(n => JSON.parse(fs.readFileSync(path.join(dir, n), 'utf8')) as QuestionSet)
const sources: Record<string, string> = { 'workspace-mcp': '.', 'linux-source-6.1': 'bench/.corpus/linux-source-6.1' }
const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

t.test('at least 60 questions over two trees, a third held out, ids unique', async (t) => {
  const all = sets.flatMap(s => s.questions)
  t.ok(all.length >= 60, `${all.length} questions`)
  t.ok(new Set(sets.map(s => s.tree)).size >= 2, 'two trees or more')
  t.equal(new Set(all.map(q => q.id)).size, all.length, 'ids unique')
  const held = all.filter(q => q.held_out).length
  t.ok(Math.abs(held - all.length / 3) <= 2, `${held} of ${all.length} held out`)
  t.ok(all.every(q => q.question.length > 10 && q.answers.length >= 1 && q.answers.length <= 3), 'a question in words, one to three answers')
})

for (const set of sets) {
  const root = sources[set.tree]
  const present = root !== undefined && fs.existsSync(path.join(root, set.folders[0]))
  t.test(`${set.tree}: every answer is a file in the tree's folders that still holds its symbol`, { skip: present ? false : `${root ?? set.tree} is not here (bench/corpus.sh unpacks it)` }, async (t) => {
    for (const q of set.questions) {
      for (const { path: file, symbol } of q.answers) {
        t.ok(set.folders.some(f => file.startsWith(`${f}/`)), `${q.id}: ${file} is in ${set.folders.join(', ')}`)
        const text = fs.readFileSync(path.join(root, file), 'utf8')
        const name = escape(symbol.replace(/^(struct|union|enum) /, ''))
        // The name after a defining keyword, or before `(`, `=`, `:`, `[`, `<`, `{` (a definition, or a call).
        const defined = new RegExp(`(^|\\n)[^\\n;]*(\\b(function|class|interface|type|const|let|var|struct|union|enum|#define|async)\\s+\\**${name}\\b|\\b${name}\\s*(\\(|=|:|\\[|<|\\{)|^${name}\\b)`, 'm')
        t.match(text, defined, `${q.id}: ${file} holds ${symbol}`)
      }
    }
  })
}
