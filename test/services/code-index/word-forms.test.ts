import fc from 'fast-check'
import t from 'tap'
import { embeddedChunk, embeddedText, MAX_EMBED_CHARS } from '../../../src/services/code-index/chunk-text.js'
import { chunkFile, docStart } from '../../../src/services/code-index/chunker.js'
import { identifierWords, matchExpression, queryTerms, searchText, searchTokens, termForms } from '../../../src/services/code-index/code-tokens.js'
import { MAX_REMEMBERED, wordForm } from '../../../src/services/code-index/word-forms.js'
import type { OutlineSymbol } from '../../../src/services/symbols/index.js'
import { runs } from '../../helpers/property.js'

t.test('search tokens: a word and its forms are one (allocate, allocation, alloc), and abbreviations join their word', async (t) => {
  const one = (...words: string[]): void => {
    t.equal(new Set(words.map(w => searchTokens(w).join(' '))).size, 1, `${words.join(', ')} are searched as one`)
  }
  one('allocate', 'allocation', 'allocator', 'allocated', 'alloc')
  one('free', 'freed', 'freeing', 'frees')
  one('init', 'initialize', 'initialization')
  one('sched', 'schedule', 'scheduling', 'scheduler')
  one('parse', 'parser', 'parsing')
  one('memory', 'mem')
  t.not(searchTokens('release')[0], searchTokens('free')[0], 'another word for the same act keeps its own form')
  t.same(searchTokens('alloc_pages(gfp)'), ['alloc_pages', 'alloc', 'page', 'gfp'], 'a name of several parts stays whole, as written; its parts take their forms')
  t.same(searchTokens('retryFailedUpload utf8 404'), ['retryfailedupload', 'retri', 'fail', 'upload', 'utf8', 'utf', '404'])
})

t.test('word forms are remembered up to a bound, and stay the same when the memory starts over', async (t) => {
  const before = wordForm('allocations')
  for (let i = 0; i <= MAX_REMEMBERED; i++) wordForm(`word${i}ing`)
  t.equal(wordForm('allocations'), before)
  t.equal(wordForm('allocations'), 'alloc')
})

t.test('query terms: the words that name no subject are dropped, unless nothing else is left', async (t) => {
  t.same(queryTerms('Where does the kernel free the pages?'), ['kernel', 'free', 'pages'])
  t.same(queryTerms('how is it done'), ['how', 'is', 'it', 'done'], 'a query of such words alone keeps them')
  t.same(queryTerms('new list open'), ['new', 'list', 'open'], 'code words that look like English stay')
})

t.test('match expressions: every form quoted, another word for the same act as an alternative, never syntax', async (t) => {
  t.equal(matchExpression(['freed', 'pages'], 'AND'), '("free" OR "releas") AND "page"')
  t.equal(matchExpression(['allocate', 'allocation', 'x_y']), '("alloc" OR "creat") OR "x_y"', 'two words of one form are one group')
  t.same([...termForms(['Freeing', 'pages'])], ['free', 'releas', 'page'])
  t.equal(matchExpression(['x']), '"x"', 'a term with no form of its own (one letter) is searched as written')
  // Whatever a client sends, the expression is quoted words joined by AND/OR and parentheses: FTS5 sees no syntax of its own.
  fc.assert(fc.property(fc.string({ maxLength: 80 }), fc.constantFrom<'AND' | 'OR'>('AND', 'OR'), (query, op) => {
    const terms = queryTerms(query)
    if (terms.length === 0) return
    const expression = matchExpression(terms, op)
    t.match(expression, /^(\(?"[a-z0-9_]+"( OR "[a-z0-9_]+")*\)?)( (AND|OR) \(?"[a-z0-9_]+"( OR "[a-z0-9_]+")*\)?)*$/)
  }), runs(300))
})

t.test('chunkFile: a long stretch with no definitions is cut into windows', async (t) => {
  const lines = Array.from({ length: 130 }, (_, i) => `x${i} = ${i};`)
  t.same(chunkFile(lines, []).map(c => [c.start, c.end]), [[1, 60], [61, 120], [121, 130]])
})

t.test('searchText: a text as the index stores it is its search tokens joined, words remembered or not', async (t) => {
  const word = fc.stringMatching(/^[A-Za-z_$][A-Za-z0-9_$]{0,44}$|^[0-9]{1,6}$/)
  const text = fc.array(fc.oneof(word, fc.constantFrom(' ', '\n', '->', '(', '\uFEFF', '\r\n', 'é', '::')), { maxLength: 40 }).map(parts => parts.join(''))
  fc.assert(fc.property(text, (text) => {
    t.equal(searchText(text), searchTokens(text).join(' '))
    t.equal(searchText(text), searchTokens(text).join(' '), 'the second time, from memory')
  }), runs(300))
  const many = Array.from({ length: MAX_REMEMBERED + 10 }, (_, i) => `Word${i}`).join(' ')
  t.equal(searchText(many), searchTokens(many).join(' '), 'past the words remembered, the memory starts over')
})

const fn = (name: string, line: number, endLine: number): OutlineSymbol => ({ kind: 'function', name, line, endLine, depth: 1, signature: `int ${name}(void)` })

t.test('chunks: a definition begins at the doc comment right above it, never above the code before it', async (t) => {
  const lines = [
    'int x;', // 1
    '', // 2
    '/**', // 3
    ' * free_pages - give pages back', // 4
    ' */', // 5
    'int free_pages(void)', // 6
    '{', // 7
    ...Array.from({ length: 20 }, () => '  work();'), // 8-27
    '}', // 28
    '#define LIMIT 4', // 29: a preprocessor line is code, not a comment
    'int other(void)', // 30
    ...Array.from({ length: 20 }, () => '  more();'), // 31-50
    '', ''
  ]
  t.equal(docStart(lines, 6), 3, 'three comment lines above')
  t.equal(docStart(lines, 30), 30, 'a #define above is no comment')
  t.equal(docStart(lines, 6, 5), 5, 'never above the floor')
  t.same(chunkFile(lines, [fn('free_pages', 6, 28), fn('other', 30, 50)]).map(c => [c.start, c.end, c.symbol]),
    [[1, 29, 'free_pages'], [30, 50, 'other']], 'the comment is in free_pages\'s chunk (with the small code around it, merged)')
})

t.test('embedded chunks, prose first: the file and the names as words, the comments, then the code with identifiers as words; a long one cut to the limit', async (t) => {
  t.equal(embeddedChunk('int f(void);', { path: 'mm/slab.c', symbol: 'f', kind: 'function', names: 'f' }), 'mm/slab: f\nint f(void);')
  t.equal(embeddedChunk('/** Retries a failed upload. */\nfunction retryFailedUpload (req) {\n  // once more\n  return send_again(req)\n}', { path: 'src/upload/retry-upload.ts', symbol: 'retryFailedUpload', kind: 'function', names: 'retryFailedUpload backoffDelay' }),
    'src/upload/retry-upload: retry failed upload (backoff delay) Retries a failed upload. once more\nfunction retry failed upload (req) {\n return send again(req)\n}')
  t.equal(embeddedChunk('x = 1', { path: 'src/a.ts', symbol: '', kind: 'code', names: '' }), 'src/a:\nx = 1', 'code between definitions: the path alone')
  t.equal(embeddedChunk('y'.repeat(MAX_EMBED_CHARS + 10), { path: 'a', symbol: '', kind: 'code', names: '' }).length, MAX_EMBED_CHARS)
  t.equal(identifierWords('HTTPServer.listen(port_number, $el)'), 'http server.listen(port number, el)')
  t.equal(identifierWords('f(_, $)'), 'f(, )', 'a name of no letter or digit is no word')
  t.equal(embeddedText('short'), 'short')
})
