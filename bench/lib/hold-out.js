// The held-out third of a question set, drawn before anything is measured and reproducible from the set alone:
// for each kind of question (where, how, reworded), the round(n / 3) questions whose SHA-256 of
// `<held_out_seed>:<id>` is lowest. A hash of the id, not a shuffle of the file, so the draw does not move when
// questions are reordered, and needs no random generator of our own.
// `node bench/lib/hold-out.js bench/retrieval/<set>.json` writes the marks of a set that names its held_out_seed.
import { createHash } from 'node:crypto'
import { readFileSync, writeFileSync } from 'node:fs'
import { pathToFileURL } from 'node:url'

/** The kinds of question, in the order they are reported. */
export const KINDS = ['where', 'how', 'reworded']

const draw = (seed, id) => createHash('sha256').update(`${seed}:${id}`).digest('hex')

/** The ids of `questions` held out for `seed`: a third of each kind (rounded), lowest draw first. */
export function heldOutIds (questions, seed) {
  const held = new Set()
  for (const kind of KINDS) {
    const ids = questions.filter(q => q.kind === kind).map(q => q.id)
    ids.sort((a, b) => draw(seed, a) < draw(seed, b) ? -1 : 1)
    for (const id of ids.slice(0, Math.round(ids.length / 3))) held.add(id)
  }
  return held
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const file = process.argv[2]
  const set = JSON.parse(readFileSync(file, 'utf8'))
  if (!Number.isInteger(set.held_out_seed)) throw new Error(`${file}: no held_out_seed (an integer) to draw the held-out third with`)
  const held = heldOutIds(set.questions, set.held_out_seed)
  for (const q of set.questions) q.held_out = held.has(q.id)
  writeFileSync(file, JSON.stringify(set, null, 2) + '\n')
  process.stdout.write(`${file}: ${held.size} of ${set.questions.length} held out (seed ${set.held_out_seed}): ${[...held].sort().join(', ')}\n`)
}
