import type { Tokenizer } from '../services/tokenizer/index.js'
import { counted } from './format.js'
import type { Pagination } from './paging.js'

/** Response budget limits shared by the search and read tools. */
export const MIN_RESPONSE_TOKENS = 1000
/** Largest budget a caller may ask for (a margin under Claude Code's 25k cap). */
export const MAX_RESPONSE_TOKENS = 20000

/** Result of measuring a text against a budget. */
export interface Measured {
  fits: boolean
  /** Tokens: exact when `exact`, else the never-low bound or the estimate used to decide. */
  tokens: number
  exact: boolean
}

/** Above this many estimated tokens per budget token, a text is judged too big without tokenizing it. */
const CLEARLY_OVER = 1.6

/**
 * Measures `text` against `budget` tokens: the UTF-8 byte length is a hard upper bound (every BPE token
 * covers at least one byte), so small texts are never tokenized; clearly oversized ones are not either.
 * In between, counting stops once the budget is passed (the tokenizer counts in parts cut at token
 * boundaries), so no more than about the budget's worth of text reaches the BPE.
 */
export async function measure (text: string, budget: number, tokenizer: Tokenizer, signal?: AbortSignal): Promise<Measured> {
  const upper = tokenizer.count(text)
  if (upper <= budget) return { fits: true, tokens: upper, exact: false }
  const estimate = tokenizer.estimate(text)
  if (estimate > budget * CLEARLY_OVER) return { fits: false, tokens: estimate, exact: false }
  const counted = await tokenizer.countParts([text], { signal, limit: budget })
  return { fits: counted.tokens[0] <= budget, tokens: counted.tokens[0], exact: counted.exact[0] }
}

/** A rendering at one rung of a degradation ladder. */
export interface Rung<T> {
  /** The text to send. */
  text: string
  /** What the caller needs to know about this rung (kept items, cut lines …). */
  info: T
}

/**
 * Walks a degradation ladder (full → smaller …) and returns the first rung that fits the budget, with its
 * measurement; the last rung is returned even if it does not fit (it should be a one-line summary).
 */
export async function fitLadder<T> (rungs: Iterable<() => Rung<T>>, budget: number, tokenizer: Tokenizer, signal?: AbortSignal): Promise<Rung<T> & { measured: Measured, rung: number }> {
  let last: (Rung<T> & { measured: Measured, rung: number }) | undefined
  let index = 0
  for (const make of rungs) {
    const rung = make()
    // Rungs that render the same text (nothing left to cut at that level) are not measured twice.
    if (last !== undefined && rung.text === last.text) {
      index++
      continue
    }
    const measured = await measure(rung.text, budget, tokenizer, signal)
    last = { ...rung, measured, rung: index++ }
    if (measured.fits) return last
  }
  if (last === undefined) throw new Error('fitLadder needs at least one rung')
  return last
}

/**
 * The largest `n` in [lo, hi] whose rendering fits the budget, by bisection (renderings must grow with
 * `n`); undefined when not even `lo` fits. About log2(hi - lo) measurements instead of one per step.
 */
export async function fitLargest<T> (lo: number, hi: number, make: (n: number) => Rung<T>, budget: number, tokenizer: Tokenizer, signal?: AbortSignal): Promise<(Rung<T> & { measured: Measured, n: number }) | undefined> {
  let best: (Rung<T> & { measured: Measured, n: number }) | undefined
  while (lo <= hi) {
    const n = best === undefined ? lo : Math.ceil((lo + hi) / 2)
    const rung = make(n)
    const measured = await measure(rung.text, budget, tokenizer, signal)
    if (measured.fits) {
      best = { ...rung, measured, n }
      lo = n + 1
    } else if (best === undefined) {
      return undefined
    } else {
      hi = n - 1
    }
  }
  return best
}

/**
 * A page's text keeping its first `kept` items, with the pagination of those, and the note to show when the
 * budget cut the page (undefined when it did not).
 */
export type PageRender = (kept: number, pagination: Pagination, cut: string | undefined) => string

/**
 * The whole page when it fits the budget, else the most items that do — their pagination then ends after
 * them, so the next call continues there. One item always goes out, so every call moves forward.
 */
export async function fitPage (page: Pagination, render: PageRender, noun: string, budget: number, tokenizer: Tokenizer, signal?: AbortSignal): Promise<{ text: string, pagination: Pagination }> {
  const make = (kept: number): Rung<Pagination> => {
    const pagination = kept === page.returned ? page : { ...page, returned: kept, has_more: true, next_offset: page.offset + kept }
    const cut = kept === page.returned ? undefined : `Note: page cut to ${counted(kept, noun)} to fit max_response_tokens=${budget}; the next call continues`
    return { text: render(kept, pagination, cut), info: pagination }
  }
  const whole = make(page.returned)
  const fits = page.returned <= 1 || (await measure(whole.text, budget, tokenizer, signal)).fits
  const chosen = fits ? whole : (await fitLargest(1, page.returned - 1, make, budget, tokenizer, signal)) ?? make(1)
  return { text: chosen.text, pagination: chosen.info }
}
