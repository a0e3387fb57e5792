import { parserHandler, type ParserThreadData } from '../symbols/index.js'
import { serveAs } from '../threads/index.js'
import { entryOf } from './index-entry.js'
import type { EntryRequest } from './index-parser.js'
import type { FileEntry } from './index-schema.js'

/** The index's parser thread (see createIndexParser): a parse, then the entry the index stores of it. */
export function entryHandler (data: ParserThreadData): (request: EntryRequest) => Promise<FileEntry> {
  const parse = parserHandler(data)
  return async ({ file, parse: request }) => {
    const { definitions, references } = await parse(request)
    return entryOf({ ...file, text: request.text, definitions, ...(references === undefined ? {} : { references }) })
  }
}

serveAs('index-parse-worker', entryHandler)
