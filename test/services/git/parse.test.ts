import t from 'tap'
import { parseBlame, parseChanges, parseDetail, parseLog, splitPatch } from '../../../src/services/git/parse.js'

const z = (...parts: string[]): Buffer => Buffer.from(parts.join('\0'))

t.test('output cut short by the byte cap parses to whole records only', async (t) => {
  const one = ['a'.repeat(40), '', 'Alice', 'a@x', '2024-01-01T00:00:00+00:00', 'first']
  t.equal(parseLog(z(...one, ...one.slice(0, 3))).length, 1, 'a partial second commit is dropped')
  t.equal(parseDetail(z('a'.repeat(40), '', 'Alice')), undefined)
  const changes = parseChanges(z(':100644 100644 aaa bbb M', 'x.txt', ':100644 100644 aaa bbb M', 'y.txt', '1\t2\tx.txt'))
  t.same(changes.map(c => [c.path, c.added, c.deleted]), [['x.txt', 1, 2], ['y.txt', null, null]], 'a file whose counts were cut off has none')
  t.same(splitPatch(''), [])
  t.same(splitPatch('noise\ndiff --git a/x b/x\n+1\n'), ['diff --git a/x b/x\n+1\n'])
})

t.test('names and messages are made safe: control characters are escaped', async (t) => {
  const [commit] = parseLog(z('a'.repeat(40), 'b'.repeat(40) + ' ' + 'c'.repeat(40), 'Eve\u001b[31m', 'e@x', '2024-01-01T00:00:00+00:00', 'subject\u202e'))
  t.equal(commit.author, 'Eve\\x1b[31m')
  t.equal(commit.subject, 'subject\\xe2\\x80\\xae')
  t.equal(commit.parents.length, 2)
  t.same(parseChanges(z(':100644 100644 aaa bbb M', 'odd\u0007name')).map(c => c.path), ['odd\\x07name'])
})

t.test('blame porcelain: facts given once per commit, stray lines ignored', async (t) => {
  const hash = 'f'.repeat(40)
  const out = [
    '\tstray content before any header',
    `${hash} 1 1 2`, 'author Alice', 'author-time 1704067200', 'summary First', 'filename a.txt', '\tline one',
    `${hash} 2 2`, '\tline two',
    'unknown-key value'
  ].join('\n')
  t.same(parseBlame(Buffer.from(out)).map(l => [l.line, l.author, l.summary, l.date, l.text]), [
    [1, 'Alice', 'First', '2024-01-01T00:00:00Z', 'line one'],
    [2, 'Alice', 'First', '2024-01-01T00:00:00Z', 'line two']
  ])
})
