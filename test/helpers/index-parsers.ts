import { entryOf } from '../../src/services/code-index/index-entry.js'
import type { IndexParser } from '../../src/services/code-index/index-parser.js'
import type { SymbolParser } from '../../src/services/symbols/parser.js'

/** An index parser over a parser of definitions (a fake), the entry made in this thread as the index's parser thread makes it. */
export function entriesHere (parser: Pick<SymbolParser, 'definitions'>): IndexParser {
  return {
    entry: async (file, language, signal) => {
      const { definitions, references } = await parser.definitions(file.text, language, signal, { references: true })
      return entryOf({ ...file, language: language.name, definitions, ...(references === undefined ? {} : { references }) })
    }
  }
}
