// The tokenizer's front door: token counts for response budgets.
// Everything else in this folder is private to it (eslint.config.js and test/layers.test.ts hold that).
export { createTokenizer } from './tokenizer.js'
export type { Tokenizer } from './tokenizer.js'
