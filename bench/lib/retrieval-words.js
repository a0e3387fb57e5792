// Which retrieval questions share no word with their answer: the questions a word index cannot meet by name.
import { queryTerms, searchTokens } from '../../dist/src/services/code-index/code-tokens.js'

/** The indexed forms of a question's words: its query terms (stop words dropped, identifiers whole and in parts), each as the index writes it. */
export const questionForms = (question) => new Set(queryTerms(question).flatMap(term => searchTokens(term)))

/** The indexed forms of an answer's name and place: its symbol and its file path (folders and file name, extension dropped). */
export const answerForms = ({ path, symbol }) => new Set(searchTokens(`${symbol} ${path.replace(/\.[^./]+$/, '')}`))

/**
 * True when no word of the question appears in any answer's symbol name or file path, both read by the index's own
 * tokenizer (code-tokens.ts and word-forms.ts): lower-cased, camelCase and snake_case split, stemmed and joined with
 * their abbreviations; the question's stop words dropped; no synonym expansion (that is ranking, not a word).
 */
export function sharesNoWord (question, answers) {
  const forms = questionForms(question)
  return answers.every(answer => ![...answerForms(answer)].some(form => forms.has(form)))
}
