import { parseRequest, parserThread, type BackgroundPriority, type ParseRequest, type SymbolLanguage, type TreeSitterLocation } from '../symbols/index.js'
import { threadModule } from '../threads/index.js'
import type { ReadFile } from './index-entry.js'
import type { FileEntry } from './index-schema.js'

/** Files a parser thread holds at once: the next is there when one is done, while the index thread writes. */
export const PARSER_DEPTH = 2

/** What the build asks of a parser: a read file turned into what the index stores. */
export interface IndexParser {
  entry(file: ReadFile, language: SymbolLanguage, signal: AbortSignal): Promise<FileEntry>
}

/** A job of the index's parser thread: the parse (the text is its own), and the file it turns into an entry. */
export interface EntryRequest {
  file: Omit<ReadFile, 'text'> & { language: string }
  parse: ParseRequest
}

/**
 * One of the index's parser threads: it parses the file and turns it into its entry (outline, chunks, words) in
 * the thread, so the index thread, which alone writes, is left its reads and SQLite.
 */
export function createIndexParser (where: TreeSitterLocation, background: BackgroundPriority): IndexParser & { close: () => Promise<void> } {
  const thread = parserThread<EntryRequest, FileEntry>(where, background, { url: threadModule('index-parse-worker', import.meta.url), name: 'index-parse-worker', depth: PARSER_DEPTH })
  return {
    entry: async ({ text, ...file }, language, signal) => await thread.run({ file: { ...file, language: language.name }, parse: parseRequest(text, language, { references: true }) }, signal),
    close: async () => { await thread.close() }
  }
}
