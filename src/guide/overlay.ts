import { createConfigFile } from '../services/config-file.js'
import type { Logger } from '../base/logger.js'
import type { ToolExample } from '../tool-api/define-tool.js'
import { parseYaml } from '../services/yaml.js'

/** Hand-kept documentation for one tool, as written in `docs/tools.yaml`. */
export interface OverlayEntry {
  /** Longer description shown in the guide instead of the one-line purpose. */
  description?: string
  /** What a successful result looks like. */
  returns?: string
  /** Error codes (TOOL_ERROR_CODES) the tool can answer with. */
  errors?: string[]
  /** Related tools, by wire name. */
  see_also?: string[]
  /** Worked examples; validated against the tool's input schema before use. */
  examples?: ToolExample[]
}

/** Why an overlay has no usable entries. */
export type OverlayStatus = 'ok' | 'missing' | 'empty' | 'corrupt'

/** One parsed snapshot of the overlay file. */
export interface Overlay {
  /** Changes whenever the file does (mtime, size, inode); part of every cache key. */
  version: string
  status: OverlayStatus
  file: string
  tools: Record<string, OverlayEntry>
  /** Shape problems found while parsing (`list_directory.examples[2]: needs 'comment'`). */
  problems: string[]
}

/** Serves the current overlay, re-reading the file only when it changed. */
export interface OverlaySource {
  current(): Overlay
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)
const ENTRY_KEYS = new Set(['description', 'returns', 'errors', 'see_also', 'examples'])

function stringList (value: unknown, where: string, problems: string[]): string[] | undefined {
  if (value === undefined || value === null) return undefined
  if (Array.isArray(value) && value.every(v => typeof v === 'string')) return value as string[]
  problems.push(`${where}: must be a list of strings`)
  return undefined
}

function text (value: unknown, where: string, problems: string[]): string | undefined {
  if (value === undefined || value === null) return undefined
  if (typeof value === 'string' && value.trim() !== '') return value.trim()
  problems.push(`${where}: must be non-empty text`)
  return undefined
}

function parseExamples (value: unknown, where: string, problems: string[]): ToolExample[] | undefined {
  if (value === undefined || value === null) return undefined
  if (!Array.isArray(value)) {
    problems.push(`${where}: must be a list of { comment, arguments }`)
    return undefined
  }
  const out: ToolExample[] = []
  value.forEach((item, i) => {
    const at = `${where}[${i}]`
    if (!isRecord(item) || typeof item.comment !== 'string' || item.comment.trim() === '') {
      problems.push(`${at}: needs a 'comment' (one line saying what the call does)`)
    } else if (!isRecord(item.arguments)) {
      problems.push(`${at}: 'arguments' must be a JSON object (use {} for none)`)
    } else {
      out.push({ comment: item.comment.trim(), arguments: item.arguments })
    }
  })
  return out
}

/** Parses overlay YAML text into entries plus shape problems; throws on YAML syntax errors. */
export function parseOverlay (source: string): { tools: Record<string, OverlayEntry>, problems: string[], empty: boolean } {
  const doc = parseYaml(source)
  if (doc === null || doc === undefined) return { tools: {}, problems: [], empty: true }
  const root = isRecord(doc) && 'tools' in doc ? doc.tools : doc
  if (!isRecord(root)) throw new Error('the top level must be a mapping: tools: { <tool_name>: { description, examples, returns } }')
  const tools: Record<string, OverlayEntry> = {}
  const problems: string[] = []
  for (const [name, raw] of Object.entries(root)) {
    if (!isRecord(raw)) {
      problems.push(`${name}: must be a mapping of description, returns, errors, see_also, examples`)
      continue
    }
    for (const key of Object.keys(raw)) {
      if (!ENTRY_KEYS.has(key)) problems.push(`${name}.${key}: unknown key (allowed: ${[...ENTRY_KEYS].join(', ')})`)
    }
    tools[name] = {
      description: text(raw.description, `${name}.description`, problems),
      returns: text(raw.returns, `${name}.returns`, problems),
      errors: stringList(raw.errors, `${name}.errors`, problems),
      see_also: stringList(raw.see_also, `${name}.see_also`, problems),
      examples: parseExamples(raw.examples, `${name}.examples`, problems)
    }
  }
  return { tools, problems, empty: Object.keys(tools).length === 0 }
}

/** Options for createOverlaySource. */
export interface OverlaySourceOptions {
  /** Absolute path of the YAML file. */
  file: string
  /** The served root: a file inside it is read through the jail (no-follow, descriptor checked). */
  root?: string
  /** Warnings (missing, empty, corrupt file) go here, once per file version. */
  log?: Logger
}

/**
 * Loads the overlay lazily and reloads it when the file changes: a `stat` per call compares
 * mtime, size and inode, so edits show up on the next render without a restart or a watcher.
 */
export function createOverlaySource ({ file, root, log }: OverlaySourceOptions): OverlaySource {
  let cached: Overlay | undefined
  const reader = createConfigFile(file, root)

  function load (version: string): Overlay {
    const source = reader.read()
    if (source === undefined) {
      log?.warn({ file }, 'tool docs overlay unreadable; using the registry text')
      return { version, status: 'missing', file, tools: {}, problems: [] }
    }
    try {
      const { tools, problems, empty } = parseOverlay(source)
      if (empty) log?.warn({ file }, 'tool docs overlay is empty; using the registry text')
      if (problems.length > 0) log?.warn({ file, problems }, 'tool docs overlay has problems')
      return { version, status: empty ? 'empty' : 'ok', file, tools, problems }
    } catch (err) {
      log?.warn({ file, err }, 'tool docs overlay is corrupt; using the registry text')
      return { version, status: 'corrupt', file, tools: {}, problems: [`${file}: ${(err as Error).message.split('\n')[0]}`] }
    }
  }

  return {
    current () {
      const version = reader.version() ?? 'missing'
      if (cached?.version === version) return cached
      if (version === 'missing') {
        log?.warn({ file }, 'tool docs overlay not found; using the registry text')
        cached = { version, status: 'missing', file, tools: {}, problems: [] }
      } else {
        cached = load(version)
      }
      return cached
    }
  }
}
