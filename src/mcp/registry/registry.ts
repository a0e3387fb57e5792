import { APP_ERR_INVALID_PARAMS, APP_ERR_SCHEMA_INCOMPATIBLE, APP_ERR_TOOL_DEFINITION, APP_ERR_TOOL_DUPLICATE, toolError, type ToolError } from '../../base/errors.js'
import type { ServiceName, Services } from '../../services/index.js'
import { closestName } from '../../services/edit-distance.js'
import { pruneMentions } from '../../services/prune-mentions.js'
import type { CatalogEntry, ToolCatalog } from '../../services/catalog.js'
import { HEADER_KEY, type AnyTool } from '../../tool-api/define-tool.js'
import type { ResourceDefinition, ResourceTemplateDefinition } from '../../tool-api/define-resource.js'
import type { PromptDefinition } from '../../tool-api/define-prompt.js'
import { checkCompatibility, normaliseSchema, publishOutputSchema, type JsonSchema } from './schema.js'
import { asWritten } from './schema-as-written.js'
import { compileArguments, type ArgumentValidator } from './validate.js'

/** A tool exactly as `tools/list` publishes it. */
export interface WireTool {
  name: string
  title: string
  description: string
  inputSchema: JsonSchema
  outputSchema?: JsonSchema
  annotations: JsonSchema
  /** Present for a tool that may run as a task (2025-11-25 execution.taskSupport). */
  execution?: { taskSupport: 'optional' | 'required' }
}

/** A tool ready to dispatch: definition, wire form, injected services, compiled validator. */
export interface RegisteredTool {
  definition: AnyTool
  wire: WireTool
  /** Parameter name → service name. */
  injected: Record<string, ServiceName>
  /** Injected parameters the tool can run without (declared `Type.Optional(Inject(…))`): they never gate it. */
  optional?: Set<string>
  validate: ArgumentValidator
  /** Parameters published as `Mcp-Param-<header>` (SEP-2243 `x-mcp-header`), checked against the body on HTTP. */
  headers: ParamHeader[]
}

/** A tool parameter mirrored in an HTTP header. */
export interface ParamHeader { param: string, header: string, type: string }

/** Everything the registry is built from. */
export interface RegistryOptions {
  tools: AnyTool[]
  services: Services
  resources?: ResourceDefinition[]
  resourceTemplates?: ResourceTemplateDefinition[]
  prompts?: PromptDefinition[]
  /** Tools per tools/list page. */
  pageSize?: number
  /** Extra convention checks; each returned line is a boot error. */
  lint?: (tools: CatalogEntry[]) => string[]
  /** The tool error for a call to a tool left out because `missing` services are not there (else it is unknown). */
  explainAbsent?: (tool: string, missing: ServiceName[]) => ToolError | undefined
  /** Tools the operator left out (`--tools`, `--exclude-tools`): not listed; a call gets `explainExcluded`'s error (else it is unknown). */
  excluded?: ReadonlySet<string>
  /** The tool error for a call to an excluded tool of `category`, given the tools served. */
  explainExcluded?: (tool: string, category: string, served: CatalogEntry[]) => ToolError
}

/** The one registry both transports serve. */
export interface Registry {
  /** Listed tools, in registration order. */
  tools: RegisteredTool[]
  tool(name: string): RegisteredTool | undefined
  /** The serialized `tools/list` result for a cursor (JSON text), or throws APP_ERR_INVALID_PARAMS. */
  toolsListPage(cursor: string | undefined): string
  /** The registry's own catalog of listed tools (also injected as `services.catalog`). */
  catalog: ToolCatalog
  /** Services, including the registry's own `catalog`. */
  services: Services
  resources: ResourceDefinition[]
  resourceTemplates: ResourceTemplateDefinition[]
  prompts: PromptDefinition[]
  /** Tools not listed because a service they need is not configured: name → missing services. */
  unavailable: Record<string, ServiceName[]>
  /** Tools not listed because the operator left them out, in registration order. */
  excluded: string[]
  /** Every defined tool that is not listed, whatever the reason: texts the server writes never name one. */
  unserved: ReadonlySet<string>
  /** The tool error a call to an unlisted tool gets, when its definition or the missing service says why (else it is an unknown tool). */
  unavailableError(name: string): ToolError | undefined
  /** The listed tool whose name is closest to `name` (a typo's fix), if one is within a few edits. */
  closestTool(name: string): string | undefined
}

const encodeCursor = (page: number): string => Buffer.from(`page:${page}`).toString('base64url')
function decodeCursor (cursor: string): number {
  const match = /^page:(\d+)$/.exec(Buffer.from(cursor, 'base64url').toString())
  return match === null ? -1 : Number(match[1])
}

function toWire (definition: AnyTool, inputSchema: JsonSchema): WireTool {
  const wire: WireTool = {
    name: definition.name,
    title: definition.title,
    description: definition.description,
    inputSchema
  } as WireTool
  if (definition.output !== undefined) wire.outputSchema = publishOutputSchema(definition.output)
  wire.annotations = { title: definition.title, ...definition.annotations }
  if (definition.task !== undefined) wire.execution = { taskSupport: definition.task.support }
  return wire
}

function registerTool (definition: AnyTool): RegisteredTool {
  if (typeof definition.name !== 'string' || typeof definition.run !== 'function' || definition.input === undefined) {
    throw new APP_ERR_TOOL_DEFINITION(`${String(definition.name)}: needs name, input and run`)
  }
  if (definition.publishInput === 'as-written') {
    const { schema, validate } = asWritten(definition.name, definition.input)
    return { definition, wire: toWire(definition, schema), injected: {}, validate, headers: paramHeaders(definition.name, schema) }
  }
  const { schema, injected, optional } = normaliseSchema(definition.input)
  const wire = toWire(definition, schema)
  const problems = checkCompatibility(wire)
  if (problems.length > 0) throw new APP_ERR_SCHEMA_INCOMPATIBLE(problems.join('; '))
  const validate = compileArguments(definition.input, new Set(Object.keys(injected)))
  return { definition, wire, injected: injected as Record<string, ServiceName>, optional, validate, headers: paramHeaders(definition.name, schema) }
}

// RFC 9110 token characters, as a header name needs them.
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/

/** The `x-mcp-header` parameters of a wire schema: top-level primitives with a valid, unique header name. */
function paramHeaders (tool: string, schema: JsonSchema): ParamHeader[] {
  const headers: ParamHeader[] = []
  // Both the flat and the as-written schema of a TypeBox object have `properties`.
  const properties = schema.properties as Record<string, JsonSchema>
  for (const [param, property] of Object.entries(properties)) {
    const header = property[HEADER_KEY]
    if (header === undefined) continue
    const type = property.type
    if (typeof header !== 'string' || !HEADER_NAME.test(header) || !['string', 'number', 'integer', 'boolean'].includes(type as string)) {
      throw new APP_ERR_TOOL_DEFINITION(`${tool}: ${param} has ${HEADER_KEY} ${JSON.stringify(header)}; it must be a header-name token on a string, number, integer or boolean parameter`)
    }
    if (headers.some(h => h.header.toLowerCase() === header.toLowerCase())) throw new APP_ERR_TOOL_DEFINITION(`${tool}: two parameters use ${HEADER_KEY} ${header}`)
    headers.push({ param, header, type: type as string })
  }
  return headers
}

function catalogEntry (tool: RegisteredTool): CatalogEntry {
  const { definition, wire } = tool
  return {
    name: wire.name,
    title: wire.title,
    category: definition.category,
    description: wire.description,
    inputSchema: wire.inputSchema,
    outputSchema: wire.outputSchema,
    annotations: wire.annotations,
    task: definition.task,
    examples: definition.examples ?? [],
    validate: (args) => {
      const check = tool.validate(args)
      return check.ok ? [] : [check.message]
    }
  }
}

/** `value` with every `description` in it less what it says of `unserved` tools (one that would be left empty stays whole). */
function pruneTexts<T> (value: T, unserved: ReadonlySet<string>): T {
  if (unserved.size === 0 || typeof value !== 'object' || value === null) return value
  if (Array.isArray(value)) return value.map(item => pruneTexts(item, unserved)) as T
  const out: Record<string, unknown> = {}
  for (const [key, item] of Object.entries(value)) {
    out[key] = key === 'description' && typeof item === 'string' ? (pruneMentions(item, unserved) || item) : pruneTexts(item, unserved)
  }
  return out as T
}

/** Builds the registry: normalises and checks every schema, gates tools on services, serializes tools/list once. */
export function createRegistry (options: RegistryOptions): Registry {
  const pageSize = options.pageSize ?? 100
  const services: Services = { ...options.services }
  const byName = new Map<string, RegisteredTool>()
  const unavailable: Record<string, ServiceName[]> = {}
  const unavailableErrors = new Map<string, ToolError>()
  const excluded: RegisteredTool[] = []

  for (const definition of options.tools) {
    const tool = registerTool(definition)
    if (byName.has(tool.wire.name) || tool.wire.name in unavailable || excluded.some(t => t.wire.name === tool.wire.name)) throw new APP_ERR_TOOL_DUPLICATE(tool.wire.name)
    if (options.excluded?.has(tool.wire.name) === true) {
      excluded.push(tool)
      continue
    }
    // catalog is provided below by the registry itself, so it never gates a tool; nor does an optional service.
    const missing = Object.entries(tool.injected).filter(([param, s]) => s !== 'catalog' && tool.optional?.has(param) !== true && services[s] === undefined).map(([, s]) => s)
    if (missing.length > 0) {
      unavailable[tool.wire.name] = missing
      const gated = definition.whenUnavailable
      const explained = gated !== undefined ? toolError(gated.code, gated.message, gated.hint) : options.explainAbsent?.(tool.wire.name, missing)
      if (explained !== undefined) unavailableErrors.set(tool.wire.name, explained)
    } else {
      byName.set(tool.wire.name, tool)
    }
  }
  const tools = [...byName.values()]
  // The conventions hold the texts as written, whatever the operator chose to serve; what is published names only
  // the tools served here.
  const lintProblems = options.lint?.([...tools, ...excluded].map(catalogEntry)) ?? []
  if (lintProblems.length > 0) throw new APP_ERR_TOOL_DEFINITION(lintProblems.join('\n'))
  const unserved = new Set([...Object.keys(unavailable), ...excluded.map(t => t.wire.name)])
  for (const tool of tools) tool.wire = pruneTexts(tool.wire, unserved)
  const entries = tools.map(catalogEntry)
  for (const tool of excluded) {
    const explained = options.explainExcluded?.(tool.wire.name, tool.definition.category, entries)
    if (explained !== undefined) unavailableErrors.set(tool.wire.name, explained)
  }

  const pages: string[] = []
  for (let i = 0; i === 0 || i < tools.length; i += pageSize) {
    const page: { tools: WireTool[], nextCursor?: string } = { tools: tools.slice(i, i + pageSize).map(t => t.wire) }
    if (i + pageSize < tools.length) page.nextCursor = encodeCursor(pages.length + 1)
    pages.push(JSON.stringify(page))
  }
  const manifestJson = JSON.stringify(tools.map(t => t.wire))
  const unlisted = [...unserved]
  const catalog: ToolCatalog = { entries: () => entries, manifestJson: () => manifestJson, unlisted: () => unlisted }
  services.catalog = catalog

  for (const list of [options.resources, options.prompts]) {
    const seen = new Set<string>()
    for (const item of list ?? []) {
      const key = 'uri' in item ? item.uri : item.name
      if (seen.has(key)) throw new APP_ERR_TOOL_DUPLICATE(key)
      seen.add(key)
    }
  }

  return {
    tools,
    tool: (name) => byName.get(name),
    toolsListPage (cursor) {
      if (cursor === undefined) return pages[0]
      const page = pages[decodeCursor(cursor)]
      if (page === undefined) throw new APP_ERR_INVALID_PARAMS(`unknown cursor '${cursor}'`)
      return page
    },
    catalog,
    services,
    resources: options.resources ?? [],
    resourceTemplates: options.resourceTemplates ?? [],
    prompts: options.prompts ?? [],
    unavailable,
    excluded: excluded.map(t => t.wire.name),
    unserved,
    unavailableError: (name) => unavailableErrors.get(name),
    closestTool: (name) => closestName(name, byName.keys())
  }
}
