import { basename } from 'node:path'
import type { Logger } from '../base/logger.js'
import type { TemplateSource } from '../services/template-files.js'
import { definePrompt, type PromptArgument, type PromptContext, type PromptDefinition } from '../tool-api/define-prompt.js'
import { completePaths } from './path-completion.js'
import { parseYaml } from '../services/yaml.js'

/** How an argument completes: workspace paths, or a fixed list of values. */
export type Completion = 'paths' | string[]

/** A Markdown template bundle parsed from its file. */
export interface TemplateBundle {
  name: string
  title?: string
  description: string
  arguments: Array<PromptArgument & { default?: string, complete?: Completion }>
  body: string
  file: string
}

const PLACEHOLDER = /\{\{\s*([a-z][a-z0-9_]*)\s*\}\}/g
const NAME = /^[a-z][a-z0-9_-]{0,63}$/
const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

function completionOf (raw: unknown): { complete?: Completion } {
  if (raw === undefined) return {}
  if (raw === 'paths') return { complete: 'paths' }
  if (Array.isArray(raw) && raw.every(v => typeof v === 'string')) return { complete: raw }
  throw new Error('an argument\'s complete must be "paths" or a list of strings')
}

/** Completion values of one argument for the text typed so far: its own list, paths, or its default. */
function completer (arg: TemplateBundle['arguments'][number]): ((value: string, ctx: PromptContext) => Promise<string[]>) | undefined {
  const { complete, default: fallback } = arg
  if (complete === 'paths') return async (value, ctx) => ctx.services.workspace === undefined ? [] : await completePaths(ctx.services.workspace, value, ctx.signal)
  const fixed = complete ?? (fallback === undefined ? undefined : [fallback])
  if (fixed === undefined) return undefined
  return async (value) => fixed.filter(v => v.toLowerCase().startsWith(value.toLowerCase()))
}

/** A bundle's YAML front matter (between `---` lines at the very top) and the Markdown after it. */
export function frontMatter (source: string): { yaml: string, body: string } | undefined {
  const fm = /^---\r?\n([\s\S]*?)\r?\n---\r?\n?/.exec(source)
  return fm === null ? undefined : { yaml: fm[1], body: source.slice(fm[0].length) }
}

/**
 * Parses one bundle: optional YAML front matter (name, title, description, arguments) then the
 * Markdown body with `{{argument}}` placeholders. Placeholders not declared become optional arguments.
 */
export function parseBundle (file: string, source: string): TemplateBundle {
  let meta: Record<string, unknown> = {}
  let body = source
  const fm = frontMatter(source)
  if (fm !== undefined) {
    const parsed = parseYaml(fm.yaml)
    if (parsed !== null && !isRecord(parsed)) throw new Error('front matter must be a mapping')
    meta = parsed ?? {}
    body = fm.body
  }
  const name = typeof meta.name === 'string' ? meta.name : basename(file, '.md')
  if (!NAME.test(name)) throw new Error(`prompt name '${name}' must match ${NAME.source}`)
  const heading = /^#\s+(.+)$/m.exec(body)?.[1]
  const description = typeof meta.description === 'string' ? meta.description.trim() : heading ?? name
  const args: TemplateBundle['arguments'] = []
  for (const raw of Array.isArray(meta.arguments) ? meta.arguments : []) {
    if (!isRecord(raw) || typeof raw.name !== 'string') throw new Error('each argument needs a name')
    args.push({
      name: raw.name,
      description: typeof raw.description === 'string' ? raw.description : undefined,
      required: raw.required === true,
      ...(typeof raw.default === 'string' ? { default: raw.default } : {}),
      ...completionOf(raw.complete)
    })
  }
  for (const m of body.matchAll(PLACEHOLDER)) {
    if (!args.some(a => a.name === m[1])) args.push({ name: m[1], required: false })
  }
  return { name, title: typeof meta.title === 'string' ? meta.title : undefined, description, arguments: args, body, file }
}

/** Fills `{{argument}}` placeholders; absent optional arguments take their default or "(not given)". */
export function fillBundle (bundle: TemplateBundle, args: Record<string, string>): string {
  return bundle.body.replace(PLACEHOLDER, (_all, key: string) => {
    if (key in args && args[key].trim() !== '') return args[key]
    return bundle.arguments.find(a => a.name === key)?.default ?? '(not given)'
  })
}

/** A bundle as an MCP prompt: prompts/list shows its arguments, prompts/get returns it filled in. */
export function bundlePrompt (bundle: TemplateBundle): PromptDefinition {
  return definePrompt({
    name: bundle.name,
    title: bundle.title,
    description: bundle.description,
    arguments: bundle.arguments.map(({ name, description, required }) => ({ name, ...(description === undefined ? {} : { description }), required })),
    complete: Object.fromEntries(bundle.arguments.flatMap(arg => {
      const complete = completer(arg)
      return complete === undefined ? [] : [[arg.name, complete]]
    })),
    get: (args) => ({
      description: bundle.description,
      messages: [{ role: 'user', content: { type: 'text', text: fillBundle(bundle, args) } }]
    })
  })
}

function parseAll (sources: TemplateSource[], log?: Logger): TemplateBundle[] {
  const out: TemplateBundle[] = []
  for (const { file, source } of sources) {
    try {
      out.push(parseBundle(file, source))
    } catch (err) {
      log?.warn({ file, err }, 'template bundle skipped')
    }
  }
  return out
}

/** Options for loadTemplatePrompts. */
export interface TemplatePromptOptions {
  /** The built-in bundles (docs/templates in the package). */
  builtin: TemplateSource[]
  /** The workspace's own bundles (config.templatesDir under the root, read through the jail). */
  user?: TemplateSource[]
  log?: Logger
}

/** Loads the built-in bundles, then the workspace's; a workspace bundle replaces a built-in of the same name. */
export function loadTemplatePrompts ({ builtin, user = [], log }: TemplatePromptOptions): PromptDefinition[] {
  const byName = new Map<string, TemplateBundle>()
  for (const bundle of parseAll(builtin, log)) byName.set(bundle.name, bundle)
  for (const bundle of parseAll(user, log)) {
    if (byName.has(bundle.name)) log?.info({ prompt: bundle.name, file: bundle.file }, 'workspace template replaces the built-in one')
    byName.set(bundle.name, bundle)
  }
  return [...byName.values()].map(bundlePrompt)
}
