/** Counts tokens to budget responses (placeholder: being built in issue #3). */
export interface Tokenizer {
  count(text: string): number
}

/** Creates the tokenizer. */
export function createTokenizer (): Tokenizer {
  return { count: (text: string) => Math.ceil(text.length / 4) }
}
