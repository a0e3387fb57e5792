// The answer under a budget (issue 7, items 8 and 9): it shrinks in proportion — fewer context lines, then
// fewer results — so it uses most of the budget; its note offers only changes that can help; and the
// structured copy is complete (line text) without sentinels.
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import t, { type Test } from 'tap'
import pino from 'pino'
import { createSearch } from '../../src/services/search/search.js'
import { createTokenizer } from '../../src/services/tokenizer/tokenizer.js'
import { createWorkspace } from '../../src/services/workspace/workspace.js'
import { searchRegex } from '../../src/tools/search-regex.js'
import { budgetNotice } from '../../src/tool-kit/search-regex-fit.js'
import { renderSearch } from '../../src/tool-kit/search-regex-render.js'
import { textOf, toolContext } from '../helpers/workspace-fixture.js'

const log = pino({ level: 'silent' })

/** 40 files, each with 5 matches spread among prose lines of about 20 tokens. */
async function corpus (t: Test) {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'wmcp-budget-')))
  t.teardown(() => fs.rmSync(root, { recursive: true, force: true }))
  for (let f = 0; f < 40; f++) {
    const lines = Array.from({ length: 120 }, (_, i) => i % 24 === 12
      ? `  const handle${i} = registry.lookup(needle${f}, "${i}") // resolve the handler`
      : `  line ${i} of module ${f}: the quick brown fox jumps over the lazy dog, again and again`)
    fs.mkdirSync(path.join(root, 'src', `pkg${f % 4}`), { recursive: true })
    fs.writeFileSync(path.join(root, 'src', `pkg${f % 4}`, `module${String(f).padStart(2, '0')}.ts`), lines.join('\n') + '\n')
  }
  const workspace = await createWorkspace({ root, log })
  const search = await createSearch({ workspace, log })
  const tokenizer = createTokenizer()
  t.teardown(() => {
    search.close()
    tokenizer.close().catch(() => {})
  })
  const run = async (args: Record<string, unknown>) => {
    const result = await searchRegex.run({ search, tokenizer, pattern: 'needle', ...args } as Parameters<typeof searchRegex.run>[0], toolContext())
    return { result, text: textOf(result), tokens: await tokenizer.countExact(textOf(result)), structured: result.structuredContent as Record<string, unknown> }
  }
  return { run, tokenizer }
}

t.test('page_size=100 context_lines=10 at 20000 tokens: context shrinks in proportion and most of the budget is used', async (t) => {
  const { run } = await corpus(t)
  const budget = 20000
  const { text, tokens, structured } = await run({ page_size: 100, context_lines: 10, max_response_tokens: budget })

  t.ok(tokens <= budget, `fits: ${tokens} tokens`)
  t.ok(tokens >= budget * 0.6, `uses most of the budget: ${tokens} of ${budget} tokens (it used 13% when all context was dropped)`)
  const cut = /context cut to (\d+) lines? \(of 10\)/.exec(text)
  t.ok(cut !== null, 'says how much context is left')
  t.ok(Number(cut?.[1]) >= 1 && Number(cut?.[1]) < 10, 'some context is kept')
  t.match(structured, { truncated: true, pagination: { returned: 100 } }, 'no result was dropped to make room')
  t.notMatch(text, /raise max_response_tokens/, 'never suggests raising a budget that is already the maximum')
  t.match(text, /lower page_size to keep more context per match/)
})

t.test('when even no context does not fit, the most results that fit are kept and the footer continues after them', async (t) => {
  const { run } = await corpus(t)
  const { text, tokens, structured } = await run({ page_size: 100, context_lines: 3, max_response_tokens: 1500 })
  const p = (structured as { pagination: { returned: number, next_offset: number } }).pagination

  t.ok(tokens <= 1500, `fits: ${tokens} tokens`)
  t.ok(tokens >= 1500 * 0.7, `uses most of the budget: ${tokens} tokens`)
  t.ok(p.returned > 1 && p.returned < 100, `kept ${p.returned} results`)
  t.match(text, new RegExp(`showing ${p.returned} of 100 results`))
  t.match(text, /context lines dropped/)
  t.match(text, /raise max_response_tokens \(up to 20000\)/, 'below the maximum, raising the budget is offered')
  t.equal(p.next_offset, p.returned)
  t.match(text, new RegExp(`offset=${p.returned}$`))
})

t.test('the note names only remedies for what was cut', async (t) => {
  const full = { maxLine: 2000, context: 4, keep: 50, countsOnly: false }
  t.equal(budgetNotice(full, full, 8000), undefined, 'nothing cut, no note')
  const onlyResults = budgetNotice({ ...full, context: 4, maxLine: 2000, keep: 20 }, full, 20000)
  t.equal(onlyResults, 'response budget of 20000 tokens: showing 20 of 50 results on this page (the footer\'s next call continues with the rest)')
  t.match(budgetNotice({ ...full, maxLine: 300 }, full, 20000), /lines cut to 300 chars — read whole lines with read_files$/)
  t.match(budgetNotice({ ...full, context: 1 }, full, 4000), /context cut to 1 line \(of 4\) — raise max_response_tokens \(up to 20000\), or lower page_size/)
  t.match(budgetNotice({ ...full, maxLine: 300 }, full, 20000, new Set(['read_files'])), /lines cut to 300 chars$/, 'no remedy names a tool the server does not serve')
  t.match(budgetNotice({ ...full, maxLine: 300 }, full, 4000, new Set(['read_files'])), /lines cut to 300 chars — raise max_response_tokens \(up to 20000\)$/)
})

t.test('structuredContent: line text in content mode, no count in files mode, and not much bigger than the text', async (t) => {
  const { run, tokenizer } = await corpus(t)
  const content = await run({ page_size: 5 })
  const matches = (content.structured as { matches: Array<{ path: string, line: number, text: string }> }).matches
  t.same(matches[0], { path: 'src/pkg0/module00.ts', line: 13, text: '  const handle12 = registry.lookup(needle0, "12") // resolve the handler' })
  t.ok(content.text.includes(`13: ${matches[0].text}`), 'the structured line is the line the text shows')

  const files = await run({ output_mode: 'files', page_size: 100 })
  const listed = (files.structured as { files: Array<Record<string, unknown>> }).files
  t.equal(listed.length, 40)
  t.ok(listed.every(f => Object.keys(f).join() === 'path'), 'files mode: path only, no -1 sentinel')
  const structuredTokens = await tokenizer.countExact(JSON.stringify(files.structured))
  t.ok(structuredTokens <= files.tokens * 1.5, `structured copy ${structuredTokens} tokens vs text ${files.tokens}`)
})

t.test('when not even one result fits beside a huge pattern, the answer falls to counts, then to the summary alone', async (t) => {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'wmcp-budget-')))
  t.teardown(() => fs.rmSync(root, { recursive: true, force: true }))
  // 1,000 characters of varied text tokenize to several hundred tokens, and the pattern is shown in the
  // header and again in the footer's next call.
  const needle = Array.from({ length: 250 }, (_, i) => `q${(i * 7919) % 1000}z`).join('').slice(0, 1000)
  fs.writeFileSync(path.join(root, 'a.txt'), `${needle}\n${needle}\n`)
  fs.writeFileSync(path.join(root, 'b.txt'), `${needle}\n`)
  const workspace = await createWorkspace({ root, log })
  const search = await createSearch({ workspace, log })
  const tokenizer = createTokenizer()
  t.teardown(() => { search.close(); tokenizer.close().catch(() => {}) })

  const result = await searchRegex.run({ search, tokenizer, pattern: needle, literal: true, page_size: 2, max_response_tokens: 1000 }, toolContext())
  const text = textOf(result)

  t.notOk(result.isError, 'shortened, never refused')
  t.match(result.structuredContent, { truncated: true })
  t.match(text, /response budget of 1000 tokens: /)
  t.notMatch(text, /^\d+: q/m, 'no line survives')
  t.match(text, /no results shown \(of 2\): the summary and the next call alone fill it — raise max_response_tokens \(up to 20000\)\n/)
  t.notMatch(text, /lines cut to 0/, 'no cut is reported for lines that are not shown')
  t.match(result.structuredContent, { pagination: { returned: 0, next_offset: 0 }, matches: [] })

  // The whole page (3 results, no next call) fits as counts: each match is a path and a line, no text.
  const counts = await searchRegex.run({ search, tokenizer, pattern: needle, literal: true, page_size: 3, max_response_tokens: 1000 }, toolContext())
  t.match(textOf(counts), /per-file counts instead of lines/)
  t.same((counts.structuredContent as { matches: unknown[] }).matches, [{ path: 'a.txt', line: 1 }, { path: 'a.txt', line: 2 }, { path: 'b.txt', line: 1 }])
  t.match(budgetNotice({ maxLine: 0, context: 0, keep: 3, countsOnly: true }, { maxLine: 2000, context: 0, keep: 3, countsOnly: false }, 1000), /per-file counts instead of lines/)
})

t.test('rendering details: a window into a long line, context rows that match, counts only, pages past the end, lower bounds', async (t) => {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'wmcp-render-')))
  t.teardown(() => fs.rmSync(root, { recursive: true, force: true }))
  fs.writeFileSync(path.join(root, 'a.txt'), `needle one\nneedle two\nplain\n${'x'.repeat(5000)} needle far\n`)
  fs.writeFileSync(path.join(root, 'b.txt'), 'needle three\n')
  const workspace = await createWorkspace({ root, log })
  const search = await createSearch({ workspace, log })
  const tokenizer = createTokenizer()
  t.teardown(() => { search.close(); tokenizer.close().catch(() => {}) })
  const run = async (args: Record<string, unknown>) => textOf(await searchRegex.run({ search, tokenizer, pattern: 'needle', ...args } as Parameters<typeof searchRegex.run>[0], toolContext()))

  t.match(await run({ page_size: 1, context_lines: 1 }), /\n1: needle one\n2: needle two\n/, 'a context row that matches is marked as a match')
  t.match(await run({ page_size: 5 }), /\n4: …x+ needle far … \[line cut: 2,000 of 5,011 chars shown\]\n/, 'the window around a far match starts with an ellipsis')
  t.match(await run({ offset: 40 }), /\nNo results on this page \(offset is past the end\)\.\n/)

  const page = await search.search({ pattern: 'needle' }, { offset: 0, pageSize: 10 })
  const counts = renderSearch({ page, pattern: 'needle', literal: false, offset: 0, pageSize: 10, callArgs: { pattern: 'needle' }, notices: [] }, { maxLine: 0, context: 0, keep: 10, countsOnly: true })
  t.match(counts, /## a\.txt\n3 matching lines on this page\n## b\.txt\n1 matching line on this page\n/)

  const capped = await createSearch({ workspace, log, maxFiles: 1 })
  t.teardown(() => capped.close())
  const partial = textOf(await searchRegex.run({ search: capped, tokenizer, pattern: 'needle', output_mode: 'files' }, toolContext()))
  t.match(partial, /^1\+ files match \/needle\//, 'a capped result set says its total is a lower bound')
})
