import t from 'tap'
import { countRecordParser, isSummaryRecord, parseRgJson, recordKind } from '../../../src/services/search/parse.js'

// ripgrep's JSON carries "arbitrary data" as {text} or {bytes}; its counts as `path\0count`. Records
// missing an optional part parse to a defined value instead of throwing mid-search.

const parse = (value: unknown) => parseRgJson(Buffer.from(JSON.stringify(value)))

t.test('a name sent as base64 bytes is shown in the safe text form; one with neither form is empty', async (t) => {
  const latin1 = Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x2e, 0x74, 0x78, 0x74]).toString('base64')

  const bytes = parse({ type: 'match', data: { path: { bytes: latin1 }, lines: { text: 'hit\n' }, line_number: 1 } })
  const neither = parse({ type: 'match', data: { path: {}, lines: {}, line_number: 2 } })

  t.match(bytes, { type: 'line', path: 'caf\\xe9.txt', line: { text: 'hit' } })
  t.match(neither, { type: 'line', path: '', line: { line: 2, text: '', length: 0 } })
})

t.test('a line number ripgrep did not compute reads as 0; an end without stats as 0 matched lines', async (t) => {
  t.match(parse({ type: 'context', data: { path: { text: 'a' }, lines: { text: 'ctx\r\n' }, line_number: null } }), { line: { line: 0, text: 'ctx', match: false } })
  t.same(parse({ type: 'begin', data: { path: { text: './a' } } }), { type: 'other' }, 'a begin event is not parsed')
  t.same(parse({ type: 'end', data: { path: { text: './a' } } }), { type: 'end', path: 'a', matchedLines: 0 })
  t.same(parse({ type: 'end', data: { path: { text: './a' }, stats: { matched_lines: 7 } } }), { type: 'end', path: 'a', matchedLines: 7 })
})

t.test('count records: a name split at its newline is joined back; a count that is not a number is dropped', async (t) => {
  const next = countRecordParser()

  t.equal(next(Buffer.from('odd')), undefined, 'no NUL yet: the name goes on in the next piece')
  t.same(next(Buffer.from('name\u00003')), { path: 'odd\\x0aname', count: 3 })
  t.equal(next(Buffer.from('b\u0000three')), undefined)
  t.same(next(Buffer.from('./c\u000012')), { path: 'c', count: 12 })
})

t.test('a record\'s kind is read from its first bytes; the summary in either key order', async (t) => {
  const kinds = ['{"type":"begin","data":{}}', '{"type":"match"', '{"type":"context","data"', '{"type":"end"}', '{"type":"summary"}', '{"type":"matches"}', '{"type":"', '{"kind":"match"}', 'x']
    .map(r => recordKind(Buffer.from(r)))

  t.same(kinds, ['begin', 'match', 'context', 'end', 'summary', 'other', 'other', 'other', 'other'])
  t.equal(isSummaryRecord(Buffer.from('{"data":{"elapsed_total":{"secs":0}},"type":"summary"}')), true, 'ripgrep 15\'s order')
  t.equal(isSummaryRecord(Buffer.from('{"type":"summary","data":{}}')), true)
  t.equal(isSummaryRecord(Buffer.from('{"type":"end","data":{}}')), false)
})
