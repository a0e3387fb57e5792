import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { isDeepStrictEqual } from 'node:util'

// The YAML the package ships (docs/tools.yaml, the templates' front matter) is parsed at build time into
// a table keyed by its exact text. A server over the shipped docs then never loads `yaml` (~250 KB of
// code, ~80 ms of the stdio cold start with the parse); an edited or user-supplied file misses the table
// and is parsed as before. Keyed by the whole text, an entry cannot go stale: any edit is a miss.

/** The table's file name, next to the module that reads it (dist/bin for the bundle, dist/src/services for tsc's output). */
export const YAML_TABLE_FILE = 'yaml-table.json'

type Parse = (text: string) => unknown
const requireModule = createRequire(import.meta.url)
let yamlParse: Parse | undefined
const parseWithLibrary: Parse = (text) => {
  // Required, not imported: the bundle keeps it out (it loads from node_modules on the first miss).
  yamlParse ??= (requireModule('yaml') as { parse: Parse }).parse
  return yamlParse(text)
}

/** A YAML parser that answers from the table in `tableFile` when it holds the text (a missing table is no table). */
export function yamlParser (tableFile: URL | string): Parse {
  let table: Map<string, string> | undefined
  const load = (): Map<string, string> => {
    try {
      return new Map(Object.entries(JSON.parse(readFileSync(tableFile, 'utf8')) as Record<string, string>))
    } catch {
      return new Map()
    }
  }
  return (text) => {
    table ??= load()
    const json = table.get(text)
    // Parsed afresh on every hit: callers own what they get, as with the library.
    return json === undefined ? parseWithLibrary(text) : JSON.parse(json)
  }
}

/** Parses YAML text (the `yaml` package's `parse`), from the build's table when the text is a shipped document. */
export const parseYaml: Parse = yamlParser(new URL(`./${YAML_TABLE_FILE}`, import.meta.url))

/**
 * The table for some YAML texts (build time): text → JSON of its parse. A text whose value JSON cannot
 * carry exactly (`.inf`, `.nan`) is left out and parsed at run time. Throws on a syntax error, as parse does.
 */
export function yamlTable (texts: string[]): string {
  const table: Record<string, string> = {}
  for (const text of texts) {
    const value = parseWithLibrary(text)
    const json = JSON.stringify(value)
    if (isDeepStrictEqual(JSON.parse(json), value)) table[text] = json
  }
  return JSON.stringify(table)
}
