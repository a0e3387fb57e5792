// The floor of an index build: reading and parsing the same files with the same grammars and queries (the
// definitions' and, as the build runs it, the references'), on as many parser threads, and nothing else (no walk,
// no chunks, no words, no SQLite). Drives the product's own parser threads (dist/src), fed from one queue.
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const dist = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'dist', 'src', 'services', 'symbols')

/**
 * Reads and parses `files` (real paths) on `threads` parser threads, with the references query unless
 * `references` is false; resolves with the wall ms and the bytes parsed.
 */
export async function parseFloor (files, threads, { references = true } = {}) {
  const { createSymbolParser, locateTreeSitter } = await import(pathToFileURL(path.join(dist, 'parser.js')).href)
  const { symbolLanguageOf, MAX_SOURCE_BYTES } = await import(pathToFileURL(path.join(dist, 'languages.js')).href)
  const where = locateTreeSitter()
  const parsers = Array.from({ length: threads }, () => createSymbolParser(where))
  let next = 0
  let bytes = 0
  const started = performance.now()
  try {
    await Promise.all(parsers.map(async (parser) => {
      while (next < files.length) {
        const file = files[next++]
        const language = symbolLanguageOf(file)
        const text = await readFile(file, 'utf8')
        if (language === undefined || text.length > MAX_SOURCE_BYTES) continue
        bytes += text.length
        await parser.definitions(text, language, undefined, { references }).catch(() => {})
      }
    }))
    return { ms: performance.now() - started, bytes }
  } finally {
    await Promise.all(parsers.map(p => p.close()))
  }
}
