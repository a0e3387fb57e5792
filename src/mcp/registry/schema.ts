import type { TSchema } from '@sinclair/typebox'
import { INJECT_KEY } from '../../tool-api/define-tool.js'

/** A plain JSON Schema object as published on the wire. */
export type JsonSchema = Record<string, unknown>

/** Result of normalising one tool input schema. */
export interface NormalisedSchema {
  /** The wire schema: flat, enum-ised, $ref-free, closed objects, plain JSON. */
  schema: JsonSchema
  /** Injected parameter name → service name, removed from `schema`. */
  injected: Record<string, string>
  /** Injected parameters declared optional: the tool runs without their service (it is then undefined). */
  optional: Set<string>
}

const DROP_KEYS = new Set(['$id', '$schema', '$defs', 'definitions', INJECT_KEY])

const isObject = (v: unknown): v is JsonSchema => typeof v === 'object' && v !== null && !Array.isArray(v)
const isNull = (s: unknown): boolean => isObject(s) && s.type === 'null'
const isLiteral = (s: unknown): s is JsonSchema => isObject(s) && 'const' in s

function literalType (value: unknown): string {
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number'
  return typeof value
}

function mergeAnnotations (target: JsonSchema, from: JsonSchema): JsonSchema {
  for (const [k, v] of Object.entries(from)) {
    if (k !== 'anyOf' && k !== 'oneOf' && !DROP_KEYS.has(k) && !(k in target)) target[k] = v
  }
  return target
}

/** Literal union → `{ type, enum }`; `[T, null]` → T; anything else is left for the check to reject. */
function collapseUnion (node: JsonSchema, variants: unknown[], refs: Map<string, JsonSchema>): JsonSchema | undefined {
  const options = variants.map(v => resolveRef(v, refs)).filter(v => !isNull(v))
  if (options.length === 1) return mergeAnnotations(normaliseNode(options[0], refs), node)
  if (options.length > 0 && options.every(isLiteral)) {
    const values = options.map(o => o.const)
    const types = [...new Set(values.map(literalType))]
    const type = types.length === 1 ? types[0] : types.every(t => t === 'integer' || t === 'number') ? 'number' : undefined
    if (type !== undefined) return mergeAnnotations({ type, enum: values }, node)
  }
  return undefined
}

function resolveRef (node: unknown, refs: Map<string, JsonSchema>): unknown {
  if (isObject(node) && typeof node.$ref === 'string') {
    const target = refs.get(node.$ref) ?? refs.get(node.$ref.replace(/^#\/(\$defs|definitions)\//, ''))
    if (target !== undefined) {
      const { $ref: _ignored, ...rest } = node
      return { ...target, ...rest }
    }
  }
  return node
}

function normaliseNode (input: unknown, refs: Map<string, JsonSchema>): JsonSchema {
  const node = resolveRef(input, refs)
  if (!isObject(node)) return {}
  const union = (node.anyOf ?? node.oneOf) as unknown[] | undefined
  if (Array.isArray(union)) {
    const collapsed = collapseUnion(node, union, refs)
    if (collapsed !== undefined) return collapsed
  }
  const out: JsonSchema = {}
  for (const [key, value] of Object.entries(node)) {
    if (DROP_KEYS.has(key)) continue
    if (key === 'properties' && isObject(value)) {
      const props: JsonSchema = {}
      for (const [name, prop] of Object.entries(value)) props[name] = normaliseNode(prop, refs)
      out.properties = props
    } else if (key === 'items' || key === 'additionalProperties') {
      out[key] = isObject(value) ? normaliseNode(value, refs) : value
    } else if (key === 'type' && Array.isArray(value)) {
      const types = value.filter(t => t !== 'null')
      out.type = types.length === 1 ? types[0] : types
    } else if (key === 'const') {
      out.type ??= literalType(value)
      out.enum = [value]
    } else {
      out[key] = Array.isArray(value) ? value.map(v => isObject(v) ? normaliseNode(v, refs) : v) : value
    }
  }
  if (out.type === 'object' || isObject(out.properties)) {
    out.type = 'object'
    if (!('additionalProperties' in out)) out.additionalProperties = false
  }
  return out
}

function collectRefs (schema: JsonSchema, extra: TSchema[]): Map<string, JsonSchema> {
  const refs = new Map<string, JsonSchema>()
  for (const defsKey of ['$defs', 'definitions']) {
    const defs = schema[defsKey]
    if (isObject(defs)) for (const [name, def] of Object.entries(defs)) refs.set(name, def as JsonSchema)
  }
  for (const s of extra) {
    const id = (s as JsonSchema).$id
    if (typeof id === 'string') refs.set(id, JSON.parse(JSON.stringify(s)))
  }
  return refs
}

/**
 * Turns a TypeBox object schema into the published wire schema, once, at startup.
 * Pure: the input is not modified. `references` are schemas a `Type.Ref` may point at.
 */
export function normaliseSchema (input: TSchema, references: TSchema[] = []): NormalisedSchema {
  const injected: Record<string, string> = {}
  const optional = new Set<string>()
  const properties = (input as JsonSchema).properties
  const required = new Set(Array.isArray((input as JsonSchema).required) ? (input as JsonSchema).required as string[] : [])
  if (isObject(properties)) {
    for (const [name, prop] of Object.entries(properties)) {
      const service = (prop as JsonSchema)[INJECT_KEY]
      if (typeof service !== 'string') continue
      injected[name] = service
      if (!required.has(name)) optional.add(name)
    }
  }
  // JSON round-trip drops TypeBox's symbol keys (Kind, OptionalKind) and functions.
  const plain = JSON.parse(JSON.stringify(input)) as JsonSchema
  const refs = collectRefs(plain, references)
  if (isObject(plain.properties)) for (const name of Object.keys(injected)) delete plain.properties[name]
  if (Array.isArray(plain.required)) {
    const required = plain.required.filter(r => !(r in injected))
    if (required.length > 0) plain.required = required
    else delete plain.required
  }
  const schema = normaliseNode(plain, refs)
  schema.type = 'object'
  if (!isObject(schema.properties)) schema.properties = {}
  return { schema, injected, optional }
}

const FORBIDDEN_KEYWORDS = ['anyOf', 'oneOf', 'allOf', 'not', '$ref', 'const']
/** Wire-name rule: lower snake case, ≤ 64 characters. */
export const TOOL_NAME_PATTERN = /^[a-z][a-z0-9_]{0,63}$/

/**
 * The published outputSchema: the normalised shape without prose or closure. Descriptions stay in the
 * TypeBox source (and the guide); on the wire they doubled the tools/list token cost for no client benefit.
 */
export function publishOutputSchema (input: TSchema): JsonSchema {
  const strip = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(strip)
    if (!isObject(node)) return node
    const out: JsonSchema = {}
    for (const [key, value] of Object.entries(node)) {
      if (key === 'description' || key === 'examples' || key === 'default' || key === 'title') continue
      if (key === 'additionalProperties' && value === false) continue
      out[key] = key === 'properties' && isObject(value)
        ? Object.fromEntries(Object.entries(value).map(([k, v]) => [k, strip(v)]))
        : strip(value)
    }
    return out
  }
  return strip(normaliseSchema(input).schema) as JsonSchema
}

function checkNode (node: unknown, path: string, out: string[], isProperty: boolean, describe = true): void {
  if (!isObject(node)) return
  for (const keyword of FORBIDDEN_KEYWORDS) {
    if (keyword in node) out.push(`${path}: uses '${keyword}'`)
  }
  if (Array.isArray(node.type)) out.push(`${path}: 'type' is an array (${node.type.join(', ')})`)
  if (isProperty) {
    if (node.type === undefined) out.push(`${path}: property has no 'type'`)
    if (describe && (typeof node.description !== 'string' || node.description.trim() === '')) out.push(`${path}: property has no 'description'`)
  }
  if (isObject(node.properties)) {
    for (const [name, prop] of Object.entries(node.properties)) checkNode(prop, `${path}.properties.${name}`, out, true, describe)
  }
  if (isObject(node.items)) checkNode(node.items, `${path}.items`, out, false, describe)
  if (isObject(node.additionalProperties)) checkNode(node.additionalProperties, `${path}.additionalProperties`, out, false, describe)
}

/** Lists every client-compatibility violation of a published tool (empty when it is clean). */
export function checkCompatibility (tool: { name: string, inputSchema: JsonSchema, outputSchema?: JsonSchema }): string[] {
  const out: string[] = []
  if (!TOOL_NAME_PATTERN.test(tool.name)) out.push(`${tool.name}: name must match ${TOOL_NAME_PATTERN.source}`)
  if (tool.inputSchema.type !== 'object') out.push(`${tool.name}.inputSchema: root type must be 'object'`)
  checkNode(tool.inputSchema, `${tool.name}.inputSchema`, out, false)
  if (tool.outputSchema !== undefined) checkNode(tool.outputSchema, `${tool.name}.outputSchema`, out, false, false)
  return out
}
