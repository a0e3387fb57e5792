import type { TObject } from '@sinclair/typebox'
import { APP_ERR_TOOL_DEFINITION } from '../../base/errors.js'
import { INJECT_KEY } from '../../tool-api/define-tool.js'
import type { JsonSchema } from './schema.js'
import { tooDeepCheck, type ArgumentValidator } from './validate.js'
import { shownField, tooDeep } from './bounded-text.js'

// A tool may publish its input schema as written (JSON Schema 2020-12 with $schema, $defs, $ref,
// allOf, if/then/else …) instead of the flat form clients handle best. Such a schema is checked
// against the 2020-12 meta-schema at registration, and arguments are validated by Ajv's 2020-12
// validator, which knows every keyword the flat validator does not.

/** The dialect a schema without `$schema` is read in (spec 2025-11-25 SEP-1613). */
export const DIALECT = 'https://json-schema.org/draft/2020-12/schema'

interface Ajv2020 {
  validateSchema(schema: object): boolean
  compile(schema: object): ((data: unknown) => boolean) & { errors?: Array<{ instancePath: string, message?: string }> | null }
  errorsText(errors?: unknown): string
  errors?: unknown
}

let ajv: Ajv2020 | undefined
// Loaded on first use, from the installed package (never bundled): only tools that ask for it pay.
function loadAjv (): Ajv2020 {
  if (ajv === undefined) {
    const { createRequire } = process.getBuiltinModule('node:module')
    const Ajv = (createRequire(import.meta.url)('ajv/dist/2020') as { default: new (options: object) => Ajv2020 }).default
    ajv = new Ajv({ strict: false, allErrors: false })
  }
  return ajv
}

/** The wire schema of an as-written input (plain JSON, TypeBox's markers gone) and its validator. */
export function asWritten (tool: string, input: TObject): { schema: JsonSchema, validate: ArgumentValidator } {
  const schema = JSON.parse(JSON.stringify(input)) as JsonSchema
  if (JSON.stringify(schema).includes(INJECT_KEY)) throw new APP_ERR_TOOL_DEFINITION(`${tool}: a schema published as written cannot declare injected services`)
  const validator = loadAjv()
  if (!validator.validateSchema(schema)) throw new APP_ERR_TOOL_DEFINITION(`${tool}: not a valid JSON Schema 2020-12 input schema: ${validator.errorsText(validator.errors)}`)
  const check = validator.compile(schema)
  return {
    schema,
    validate (raw) {
      const args = raw === undefined || raw === null ? {} : raw
      // A recursive schema ($ref to itself) makes Ajv follow the value as deep as it goes: bounded first.
      const deep = typeof args === 'object' ? tooDeep(args as Record<string, unknown>) : undefined
      if (deep !== undefined) return tooDeepCheck(deep, (args as Record<string, unknown>)[deep])
      if (check(args)) return { ok: true, value: { ...(args as Record<string, unknown>) } }
      // A failed check always leaves errors, each with a message (Ajv's `messages` option is on by default).
      const first = (check.errors as Array<{ instancePath: string, message: string }>)[0]
      const field = first.instancePath === '' ? 'arguments' : shownField(first.instancePath.slice(1).split('/').map(s => s.replace(/~1/g, '/').replace(/~0/g, '~')))
      return { ok: false, unknown: false, message: `${field}: ${first.message}` }
    }
  }
}
