import { pruneMentions } from '../services/prune-mentions.js'
import type { Tokenizer } from '../services/tokenizer/index.js'
import { fitLadder, fitLargest, MAX_RESPONSE_TOKENS, type Rung } from './budget.js'
import { renderSearch, type RenderInput, type RenderLevel } from './search-regex-render.js'
import { counted } from './format.js'

/** The page rendered at the most detailed level that fits the budget. */
export interface FittedSearch {
  text: string
  level: RenderLevel
  /** The level that was asked for (what `level` is compared with). */
  full: RenderLevel
  /** The budget notice added to the text, if anything was cut. */
  note?: string
}

/** Says what the budget cut, and only the changes that would bring it back. */
export function budgetNotice (level: RenderLevel, full: RenderLevel, budget: number, unserved: ReadonlySet<string> = new Set()): string | undefined {
  const cuts: string[] = []
  const remedies: string[] = []
  if (level.keep === 0) {
    // Nothing shown: line and context cuts would mean nothing.
    if (full.keep > 0) cuts.push(`no results shown (of ${full.keep}): the summary and the next call alone fill it`)
  } else {
    if (level.keep < full.keep) cuts.push(`showing ${level.keep} of ${full.keep} results on this page (the footer's next call continues with the rest)`)
    if (level.countsOnly) cuts.push('per-file counts instead of lines')
    else if (level.maxLine < full.maxLine) {
      cuts.push(`lines cut to ${level.maxLine} chars`)
      remedies.push('read whole lines with read_files')
    }
    if (level.context < full.context) {
      cuts.push(level.context === 0 ? 'context lines dropped' : `context cut to ${counted(level.context, 'line')} (of ${full.context})`)
      remedies.push('lower page_size to keep more context per match')
    }
  }
  if (cuts.length === 0) return undefined
  // Raising the budget is offered only while there is room to raise it.
  if (budget < MAX_RESPONSE_TOKENS) remedies.unshift(`raise max_response_tokens (up to ${MAX_RESPONSE_TOKENS})`)
  const remedy = pruneMentions(remedies.join(', or '), unserved)
  return `response budget of ${budget} tokens: ${cuts.join(', ')}${remedy === '' ? '' : ` — ${remedy}`}`
}

/**
 * Renders the page at the most detailed level that fits: shorter lines, then fewer context lines, then
 * fewer results (each the largest that fits, found by bisection), then counts only. So an answer that
 * must shrink still uses most of its budget instead of falling to the next coarse step.
 */
export async function fitSearch (input: RenderInput, items: number, contextLines: number, budget: number, tokenizer: Tokenizer, signal?: AbortSignal): Promise<FittedSearch> {
  const full: RenderLevel = { maxLine: 2000, context: contextLines, keep: items, countsOnly: false }
  const rung = (level: RenderLevel): Rung<RenderLevel> => {
    const note = budgetNotice(level, full, budget, input.unserved)
    return { text: renderSearch({ ...input, notices: note === undefined ? input.notices : [...input.notices, note] }, level), info: level }
  }
  const done = (fitted: Rung<RenderLevel>): FittedSearch => ({ text: fitted.text, level: fitted.info, full, note: budgetNotice(fitted.info, full, budget, input.unserved) })

  const first = await fitLadder([() => rung(full), () => rung({ ...full, maxLine: 300 })], budget, tokenizer, signal)
  if (first.measured.fits) return done(first)
  if (contextLines > 0) {
    const context = await fitLargest(0, contextLines - 1, n => rung({ ...full, maxLine: 300, context: n }), budget, tokenizer, signal)
    if (context !== undefined) return done(context)
  }
  if (items > 1) {
    const fewer = await fitLargest(1, items - 1, n => rung({ maxLine: 300, context: 0, keep: n, countsOnly: false }), budget, tokenizer, signal)
    if (fewer !== undefined) return done(fewer)
  }
  const last = await fitLadder([
    () => rung({ maxLine: 80, context: 0, keep: 1, countsOnly: false }),
    () => rung({ maxLine: 0, context: 0, keep: items, countsOnly: true }),
    () => rung({ maxLine: 0, context: 0, keep: 0, countsOnly: true })
  ], budget, tokenizer, signal)
  return done(last)
}
