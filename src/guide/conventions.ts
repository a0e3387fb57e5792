import type { CatalogEntry } from '../services/catalog.js'
import type { Tokenizer } from '../services/tokenizer/index.js'

/** A convention rule: number (as in the docs) and short name. */
export interface Rule {
  id: number
  name: string
}

/** The six conventions, checked by code (issue #4, ADR-0019, Context MCP validation rules). */
export const RULES = {
  batch: { id: 1, name: 'one-batch-field' },
  firstSentence: { id: 2, name: 'first-sentence' },
  partner: { id: 3, name: 'get-names-partner' },
  params: { id: 4, name: 'parameter-descriptions' },
  budget: { id: 5, name: 'tool-token-allowance' },
  naming: { id: 6, name: 'names-titles-annotations' }
} as const satisfies Record<string, Rule>

/** One convention violation: which tool, which rule, what to change. */
export interface Violation {
  tool: string
  rule: Rule
  message: string
}

/** Batch capability goes through one of these list fields. */
export const BATCH_FIELDS = ['paths', 'files', 'patterns'] as const
/**
 * Most tokens one tool's tools/list entry (name, title, description, schemas, annotations) may cost.
 * Per tool, so a new tool is judged on its own size, never on the others'; tools/list as a whole then
 * stays within this × the tool count. Set from the largest entry (search_regex, 1,031 when chosen) with room.
 */
export const TOOL_TOKEN_ALLOWANCE = 1200
/** Length bounds of any description. */
export const DESCRIPTION_MIN = 20
/** Upper length bound of any description. */
export const DESCRIPTION_MAX = 1000
/** Longest first sentence. */
export const FIRST_SENTENCE_MAX = 200

/** Verbs a tool name may start with. */
export const TOOL_VERBS = new Set([
  'get', 'list', 'find', 'search', 'read', 'describe', 'count', 'check', 'explain', 'show', 'fetch', 'query',
  'resolve', 'open', 'summarize', 'diff', 'compare', 'inspect', 'lookup', 'locate', 'stat', 'echo', 'write',
  'create', 'update', 'delete', 'run', 'watch', 'index', 'preview', 'validate', 'analyze', 'trace', 'map'
])
/**
 * Prefixes naming the system a tool reads, each with the commands it may be followed by: `git_log` mirrors the
 * git command an agent already knows, which reads better than a verb made up for it (`list_commits`).
 */
export const TOOL_NAMESPACES: Record<string, ReadonlySet<string>> = {
  git: new Set(['log', 'show', 'diff', 'blame'])
}
// Words that start a sentence about the tool rather than one that says what it does.
const NOT_A_VERB = new Set(['this', 'the', 'a', 'an', 'it', 'tool', 'use', 'call', 'helper', 'utility', 'used', 'allows', 'lets'])
const SNAKE = /^[a-z][a-z0-9]*(?:_[a-z0-9]+)*$/
const EXAMPLE_MARKER = /\b(e\.g\.|eg\.|for example|example|such as)/i

type Schema = Record<string, unknown>
const isRecord = (v: unknown): v is Schema => typeof v === 'object' && v !== null && !Array.isArray(v)

/** The first sentence: text up to the first `.`, `!` or `?` followed by whitespace (not after e.g./i.e.). */
export function firstSentence (description: string): string {
  const text = description.trim()
  const re = /[.!?](?=\s|$)/g
  let m: RegExpExecArray | null
  while ((m = re.exec(text)) !== null) {
    const before = text.slice(Math.max(0, m.index - 4), m.index + 1).toLowerCase()
    if (/(e\.g\.|i\.e\.|etc\.|vs\.)$/.test(before)) continue
    return text.slice(0, m.index + 1)
  }
  return text.split(/\n/)[0]
}

/** Paragraphs of a description (blank-line separated). */
export function paragraphs (description: string): string[] {
  return description.trim().split(/\n\s*\n/).map(p => p.trim()).filter(Boolean)
}

function properties (entry: CatalogEntry): Schema {
  return isRecord(entry.inputSchema.properties) ? entry.inputSchema.properties : {}
}

/** The tool's batch list field, if it has one. */
export function batchField (entry: CatalogEntry): string | undefined {
  const props = properties(entry)
  return BATCH_FIELDS.find(f => isRecord(props[f]) && props[f].type === 'array')
}

function singularOf (name: string): string[] {
  if (name.endsWith('ies')) return [name.slice(0, -3) + 'y']
  if (name.endsWith('es')) return [name.slice(0, -2), name.slice(0, -1)]
  if (name.endsWith('s')) return [name.slice(0, -1)]
  return []
}

function ruleBatch (entry: CatalogEntry, out: Violation[]): void {
  const props = properties(entry)
  for (const [name, schema] of Object.entries(props)) {
    if (!isRecord(schema) || schema.type !== 'array') continue
    for (const singular of singularOf(name)) {
      if (singular in props) {
        out.push({ tool: entry.name, rule: RULES.batch, message: `has both '${singular}' and '${name}'; drop '${singular}' and batch through the one list field '${name}'` })
      }
    }
  }
  const fields = BATCH_FIELDS.filter(f => isRecord(props[f]) && props[f].type === 'array')
  if (fields.length > 1) {
    out.push({ tool: entry.name, rule: RULES.batch, message: `batches through ${fields.join(' and ')}; keep one list field` })
  }
}

function ruleFirstSentence (entry: CatalogEntry, out: Violation[]): void {
  const v = (message: string): void => { out.push({ tool: entry.name, rule: RULES.firstSentence, message }) }
  const first = firstSentence(entry.description)
  if (first.length > FIRST_SENTENCE_MAX) v(`first sentence is ${first.length} characters; cut it to ≤ ${FIRST_SENTENCE_MAX} and move detail to the second paragraph`)
  const word = /^[A-Za-z]+/.exec(first)?.[0] ?? ''
  if (word === '' || word[0] !== word[0].toUpperCase() || NOT_A_VERB.has(word.toLowerCase())) {
    v(`first sentence starts with '${first.split(/\s/)[0]}'; start with the verb that says what the tool does ("Read …", "Search …")`)
  }
  const batch = batchField(entry)
  if (batch !== undefined && !first.includes(batch)) {
    v(`batch tool: the first sentence must say how to batch, naming \`${batch}\` ("… — pass several in \`${batch}\` to … in one call")`)
  }
}

function rulePartner (entry: CatalogEntry, all: CatalogEntry[], out: Violation[]): void {
  if (!entry.name.startsWith('get_')) return
  const others = all.filter(e => e.name !== entry.name).map(e => e.name)
  if (others.length === 0) return
  const noun = entry.name.slice(4)
  const exact = others.filter(n => n === `list_${noun}s` || n === `list_${noun}` || n === `find_${noun}s` || n === `read_${noun}s`)
  const second = paragraphs(entry.description)[1] ?? ''
  const named = others.filter(n => second.includes(n))
  if (exact.length > 0 && !exact.some(n => named.includes(n))) {
    out.push({ tool: entry.name, rule: RULES.partner, message: `second paragraph must name its list/batch partner ${exact.map(n => `'${n}'`).join(' or ')}` })
  } else if (named.length === 0) {
    out.push({ tool: entry.name, rule: RULES.partner, message: 'a get_* tool names its list/batch partner (another tool, e.g. list_directory) in its second paragraph; add that paragraph' })
  }
}

function checkParams (tool: string, props: Schema, prefix: string, out: Violation[]): void {
  for (const [name, schema] of Object.entries(props)) {
    if (!isRecord(schema)) continue
    const path = prefix + name
    const v = (message: string): void => { out.push({ tool, rule: RULES.params, message: `parameter '${path}' ${message}` }) }
    const description = typeof schema.description === 'string' ? schema.description.trim() : ''
    if (description === '') v('has no description; add one with an example value ("…, e.g. \\"src\\"")')
    else {
      if (description.length < DESCRIPTION_MIN || description.length > DESCRIPTION_MAX) v(`description is ${description.length} characters; keep it within ${DESCRIPTION_MIN}–${DESCRIPTION_MAX}`)
      const selfEvident = Array.isArray(schema.enum) || schema.type === 'boolean'
      if (!selfEvident && !EXAMPLE_MARKER.test(description)) v('description gives no example value; add one ("…, e.g. \\"src/app.ts\\"")')
    }
    if (!SNAKE.test(name)) out.push({ tool, rule: RULES.naming, message: `parameter '${path}' is not snake_case; rename it` })
    const nested = schema.type === 'array' && isRecord(schema.items) ? schema.items : schema
    if (isRecord(nested.properties)) checkParams(tool, nested.properties, `${path}${nested === schema ? '.' : '[].'}`, out)
  }
}

function ruleParams (entry: CatalogEntry, out: Violation[]): void {
  const length = entry.description.trim().length
  if (length < DESCRIPTION_MIN || length > DESCRIPTION_MAX) {
    out.push({ tool: entry.name, rule: RULES.params, message: `description is ${length} characters; keep it within ${DESCRIPTION_MIN}–${DESCRIPTION_MAX}` })
  }
  checkParams(entry.name, properties(entry), '', out)
}

function startsWithVerb (name: string): boolean {
  const [first, second] = name.split('_')
  return TOOL_VERBS.has(first) || TOOL_NAMESPACES[first]?.has(second) === true
}

function ruleNaming (entry: CatalogEntry, out: Violation[]): void {
  const v = (message: string): void => { out.push({ tool: entry.name, rule: RULES.naming, message }) }
  if (!SNAKE.test(entry.name)) v('name is not snake_case; use lower_snake_case such as read_files')
  else if (!startsWithVerb(entry.name)) v(`name does not start with a verb ('${entry.name.split('_')[0]}'); use verb_noun such as list_directory`)
  if (typeof entry.title !== 'string' || entry.title.trim() === '' || entry.title === entry.name) v('needs a human title ("Read Files")')
  const hints = Object.keys(entry.annotations ?? {}).filter(k => k !== 'title')
  if (hints.length === 0) v('needs annotations (readOnlyHint, idempotentHint, openWorldHint)')
  else if (typeof entry.annotations.readOnlyHint !== 'boolean') v('annotations must state readOnlyHint')
}

/** What rule 5 measured: every entry of tools/list and the whole list, in tokens. */
export interface TokenReport {
  /** The whole tools/list (the JSON array of entries). */
  tokens: number
  /** The allowance × the number of tools: what the whole list may cost. */
  budget: number
  /** Each tool's entry, by name, in list order. */
  toolTokens: Record<string, number>
  violations: Violation[]
}

/** Rule 5: each tool's tools/list entry, counted exactly by the tokenizer service's BPE, within the per-tool allowance. */
export async function checkBudget (manifestJson: string, tokenizer: Tokenizer, allowance = TOOL_TOKEN_ALLOWANCE): Promise<TokenReport> {
  const wire = JSON.parse(manifestJson) as Array<{ name: string, outputSchema?: unknown }>
  const toolTokens: Record<string, number> = {}
  const violations: Violation[] = []
  for (const entry of wire) {
    const json = JSON.stringify(entry)
    const tokens = await tokenizer.countExact(json)
    toolTokens[entry.name] = tokens
    if (tokens <= allowance) continue
    const share = entry.outputSchema === undefined ? 0 : Math.round(JSON.stringify(entry.outputSchema).length / json.length * 100)
    violations.push({
      tool: entry.name,
      rule: RULES.budget,
      message: `its tools/list entry is ${tokens} tokens, over the ${allowance}-token allowance per tool (its outputSchema is ~${share}% of it); ` +
        'trim the outputSchema to what programmatic clients need, shorten the second paragraph, move detail to docs/tools.yaml'
    })
  }
  return { tokens: await tokenizer.countExact(manifestJson), budget: allowance * wire.length, toolTokens, violations }
}

/**
 * Runs rules 1–4 and 6 over published tools.
 * Rule 5 is checkBudget: it needs the BPE worker, so it runs in `check` and tests, not at boot.
 */
export function lintConventions (entries: CatalogEntry[]): Violation[] {
  const out: Violation[] = []
  for (const entry of entries) {
    ruleBatch(entry, out)
    ruleFirstSentence(entry, out)
    rulePartner(entry, entries, out)
    ruleParams(entry, out)
    ruleNaming(entry, out)
  }
  return out
}

/** One violation as a line: `tool: rule N (name): what to change`. */
export function formatViolation (v: Violation): string {
  return `${v.tool}: rule ${v.rule.id} (${v.rule.name}): ${v.message}`
}

/** The registry's boot-time lint: rules 1–4 and 6 as boot errors. */
export function bootLint (entries: CatalogEntry[]): string[] {
  return lintConventions(entries).map(formatViolation)
}
