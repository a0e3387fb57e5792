import { Type, type TObject, type TSchema } from '@sinclair/typebox'
import { TypeCompiler } from '@sinclair/typebox/compiler'
import { Value, ValueErrorType, type ValueError } from '@sinclair/typebox/value'
import { MAX_ARGUMENT_DEPTH, shownField, shownValue, tooDeep } from './bounded-text.js'

/** Outcome of checking a call's arguments. */
export type ArgumentCheck =
  | { ok: true, value: Record<string, unknown> }
  | { ok: false, unknown: boolean, message: string }

/** Checks raw `tools/call` arguments: null-as-absent, defaults, unknown names, then the schema. */
export type ArgumentValidator = (raw: unknown) => ArgumentCheck

function describe (error: ValueError): string {
  const s = error.schema as Record<string, unknown>
  switch (error.type) {
    case ValueErrorType.NumberMaximum:
    case ValueErrorType.IntegerMaximum: return `must be <= ${s.maximum}`
    case ValueErrorType.NumberMinimum:
    case ValueErrorType.IntegerMinimum: return `must be >= ${s.minimum}`
    case ValueErrorType.StringMinLength: return `must be at least ${s.minLength} character(s) long`
    case ValueErrorType.StringMaxLength: return `must be at most ${s.maxLength} characters long`
    case ValueErrorType.ArrayMinItems: return `must have at least ${s.minItems} item(s)`
    case ValueErrorType.ArrayMaxItems: return `must have at most ${s.maxItems} items`
    case ValueErrorType.StringPattern: return `must match /${s.pattern}/`
    case ValueErrorType.Integer: return 'must be an integer'
    case ValueErrorType.Number: return 'must be a number'
    case ValueErrorType.String: return 'must be a string'
    case ValueErrorType.Boolean: return 'must be true or false'
    case ValueErrorType.Array: return 'must be an array'
    case ValueErrorType.Object: return 'must be an object'
    case ValueErrorType.Union: {
      // A Union error's schema is the union itself, which always has anyOf; `?? []` is a guard.
      /* c8 ignore next */
      const values = ((s.anyOf as Array<Record<string, unknown>>) ?? []).map(v => v.const).filter(v => v !== undefined)
      return values.length > 0 ? `must be one of ${values.map(v => shownValue(v)).join(', ')}` : 'does not match any allowed shape'
    }
    case ValueErrorType.Literal: return `must be ${shownValue(s.const)}`
    case ValueErrorType.ObjectRequiredProperty: return 'is required'
    default: return error.message.toLowerCase()
  }
}

/** True when a schema's children (not the schema itself) declare a default. */
function hasDefaultBelow (schema: object): boolean {
  return Object.entries(schema).some(([key, child]) => key !== 'default' && typeof child === 'object' && child !== null &&
    (('default' in child && !Array.isArray(child)) || hasDefaultBelow(child)))
}

/** `value` with null dropped wherever `schema` has an optional property, at any depth; copies only what it changes. */
function withoutNulls (schema: TSchema, value: unknown): unknown {
  if (schema.type === 'array' && Array.isArray(value)) {
    const items = value.map(item => withoutNulls(schema.items as TSchema, item))
    return items.every((item, i) => item === value[i]) ? value : items
  }
  if (schema.type !== 'object' || !isNode(value)) return value
  const properties = (schema.properties ?? {}) as Record<string, TSchema>
  const required: string[] = schema.required ?? []
  let out = value
  for (const [key, child] of Object.entries(value)) {
    const shape = properties[key]
    if (shape === undefined) continue
    const next = child === null && !required.includes(key) ? undefined : withoutNulls(shape, child)
    if (next === child) continue
    if (out === value) out = { ...value }
    if (next === undefined) delete out[key]
    else out[key] = next
  }
  return out
}

/** `/files/0/extra` → `files[0].extra` (the JSON path a model reads; bounded, whatever the keys). */
function fieldName (path: string): string {
  const name = shownField(path.split('/').slice(1).map(s => s.replace(/~1/g, '/').replace(/~0/g, '~')))
  // A root-level error (empty path) is caught before the schema runs (arguments must be an object):
  // '(arguments)' is the guard's name for it.
  /* c8 ignore next */
  return name === '' ? '(arguments)' : name
}

const isNode = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/**
 * A copy of `schema` whose objects are closed at every depth, as the published schema is
 * (schema.ts normaliseNode); spread keeps TypeBox's symbol keys, which the compiler needs.
 */
function closeObjects<T extends TSchema> (schema: T): T {
  const out = { ...schema } as Record<string | symbol, unknown>
  // JSON Schema allows boolean subschemas (`true`), which TypeBox never builds: the isNode tests below
  // pass them through untouched for hand-written schemas, so their false arms are not reached here.
  /* c8 ignore start */
  if (isNode(schema.properties)) {
    out.properties = Object.fromEntries(Object.entries(schema.properties).map(([k, v]) => [k, isNode(v) ? closeObjects(v as TSchema) : v]))
  }
  for (const key of ['items', 'additionalProperties'] as const) if (isNode(schema[key])) out[key] = closeObjects(schema[key] as TSchema)
  for (const key of ['anyOf', 'oneOf', 'allOf'] as const) {
    if (Array.isArray(schema[key])) out[key] = (schema[key] as unknown[]).map(v => isNode(v) ? closeObjects(v as TSchema) : v)
  }
  /* c8 ignore stop */
  if ((schema.type === 'object' || isNode(schema.properties)) && !('additionalProperties' in schema)) out.additionalProperties = false
  return out as T
}

/** The error to report: an unknown property anywhere wins (it names the fix), else the first. */
function pick (errors: Iterable<ValueError>): ValueError | undefined {
  let first: ValueError | undefined
  let seen = 0
  for (const error of errors) {
    if (error.type === ValueErrorType.ObjectAdditionalProperties) return error
    first ??= error
    // Bounded: a huge invalid argument must not cost a walk over every error.
    if (++seen >= 64) break
  }
  return first
}

/** The refusal of an argument whose arrays and objects nest deeper than MAX_ARGUMENT_DEPTH. */
export function tooDeepCheck (key: string, value: unknown): ArgumentCheck {
  return { ok: false, unknown: false, message: `${shownField([key])}: must not nest arrays or objects more than ${MAX_ARGUMENT_DEPTH} levels deep, received ${shownValue(value)}` }
}

/** Compiles a validator for the client-visible part of a tool's input schema. */
export function compileArguments (input: TObject, injected: Set<string>): ArgumentValidator {
  const visible: Record<string, TSchema> = {}
  for (const [name, schema] of Object.entries(input.properties)) if (!injected.has(name)) visible[name] = schema
  const schema = closeObjects(Type.Object(visible, { additionalProperties: false }))
  // Compiled on first use: ~1.5 ms a tool that neither initialize nor tools/list needs (stdio cold start).
  let compiled: ReturnType<typeof TypeCompiler.Compile<typeof schema>> | undefined
  const names = Object.keys(visible)
  // Top-level defaults are copied by a plain loop; Value.Default's generic walk only runs for nested ones.
  const topDefaults = Object.entries(visible).filter(([, s]) => 'default' in s).map(([k, s]) => [k, s.default] as const)
  const nestedDefaults = Object.values(visible).some(s => hasDefaultBelow(s))

  return (raw) => {
    if (raw !== undefined && raw !== null && (typeof raw !== 'object' || Array.isArray(raw))) {
      return { ok: false, unknown: false, message: `arguments: must be an object, received ${shownValue(raw)}` }
    }
    const given = (raw ?? {}) as Record<string, unknown>
    for (const key in given) {
      if (Object.hasOwn(given, key) && !Object.hasOwn(visible, key)) {
        const valid = names.length > 0 ? `valid arguments: ${names.join(', ')}` : 'this tool takes no arguments'
        return { ok: false, unknown: true, message: `${shownField([key])}: unknown argument; ${valid}` }
      }
    }
    // Before any walk that follows the value rather than the schema (Value.Default clones the whole value).
    const deep = tooDeep(given)
    if (deep !== undefined) return tooDeepCheck(deep, given[deep])
    // Models send null for "not given": an optional property, at any depth, treats it as absent.
    const args = { ...withoutNulls(schema, given) as Record<string, unknown> }
    for (const [key, def] of topDefaults) if (args[key] === undefined) args[key] = typeof def === 'object' && def !== null ? structuredClone(def) : def
    const value = nestedDefaults ? Value.Default(schema, args) as Record<string, unknown> : args
    const check = compiled ??= TypeCompiler.Compile(schema)
    if (check.Check(value)) return { ok: true, value }
    const first = pick(check.Errors(value))
    // Check() failed, so Errors() yields at least one: the undefined arm is a guard.
    /* c8 ignore next */
    if (first === undefined) return { ok: false, unknown: false, message: 'arguments: invalid' }
    if (first.type === ValueErrorType.ObjectAdditionalProperties) {
      // closeObjects closes only objects that have properties (TypeBox always writes them): `?? {}` is a guard.
      /* c8 ignore next */
      const names = Object.keys((first.schema as { properties?: object }).properties ?? {})
      return { ok: false, unknown: true, message: `${fieldName(first.path)}: unknown argument; ${names.length > 0 ? `valid: ${names.join(', ')}` : 'this object takes no properties'}` }
    }
    const received = first.type === ValueErrorType.ObjectRequiredProperty ? '' : `, received ${shownValue(first.value)}`
    return { ok: false, unknown: false, message: `${fieldName(first.path)}: ${describe(first)}${received}` }
  }
}
