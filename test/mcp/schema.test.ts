import t from 'tap'
import { Type, type TSchema } from '@sinclair/typebox'
import { checkCompatibility, normaliseSchema, publishOutputSchema } from '../../src/mcp/registry/schema.js'
import { Inject } from '../../src/tool-api/define-tool.js'

t.test('optional nullable parameters are published flat and not required', async (t) => {
  const input = Type.Object({
    pattern: Type.String({ description: 'Regex, e.g. "foo"' }),
    path: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: 'Folder, e.g. "src"' }))
  })

  const { schema } = normaliseSchema(input)

  t.strictSame(schema, {
    type: 'object',
    properties: {
      pattern: { type: 'string', description: 'Regex, e.g. "foo"' },
      path: { type: 'string', description: 'Folder, e.g. "src"' }
    },
    required: ['pattern'],
    additionalProperties: false
  })
})

t.test('literal unions become a typed enum that keeps default and description', async (t) => {
  const input = Type.Object({
    sort: Type.Optional(Type.Union([Type.Literal('name'), Type.Literal('mtime')], { default: 'name', description: 'Order, e.g. "mtime"' }))
  })

  const { schema } = normaliseSchema(input)

  t.strictSame((schema.properties as Record<string, unknown>).sort, { type: 'string', enum: ['name', 'mtime'], default: 'name', description: 'Order, e.g. "mtime"' })
})

t.test('injected services are stripped from the schema and reported', async (t) => {
  const input = Type.Object({
    pattern: Type.String({ description: 'Regex, e.g. "foo"' }),
    search: Inject('search')
  })

  const { schema, injected } = normaliseSchema(input)

  t.strictSame(injected, { search: 'search' })
  t.strictSame(Object.keys(schema.properties as object), ['pattern'])
  t.strictSame(schema.required, ['pattern'])
})

t.test('local $ref is inlined and $id dropped', async (t) => {
  const Item = Type.Object({ path: Type.String({ description: 'File, e.g. "a.ts"' }) }, { $id: 'Item' })
  const input = Type.Object({ files: Type.Array(Type.Ref(Item), { description: 'Files, e.g. [{"path":"a"}]' }) }, { $id: 'Input' })

  const { schema } = normaliseSchema(input, [Item])

  t.notOk('$id' in schema)
  t.strictSame((schema.properties as any).files.items, { type: 'object', properties: { path: { type: 'string', description: 'File, e.g. "a.ts"' } }, required: ['path'], additionalProperties: false })
  t.strictSame(checkCompatibility({ name: 'read_files', inputSchema: schema }), [])
})

t.test('the compatibility check names the tool and the JSON path of each violation', async (t) => {
  const problems = checkCompatibility({
    name: 'Bad-Name',
    inputSchema: {
      type: 'object',
      properties: {
        a: { anyOf: [{ type: 'string' }, { type: 'number' }], description: 'x' },
        b: { type: ['string', 'null'], description: 'y' },
        c: { type: 'string' },
        d: { description: 'no type' },
        e: { type: 'string', const: 'k', description: 'z' }
      }
    }
  })

  t.match(problems, [
    /name must match/,
    /Bad-Name\.inputSchema\.properties\.a: uses 'anyOf'/,
    /properties\.a: property has no 'type'/,
    /properties\.b: 'type' is an array/,
    /properties\.c: property has no 'description'/,
    /properties\.d: property has no 'type'/,
    /properties\.e: uses 'const'/
  ])
})

t.test('published output schemas keep the shape but drop prose and closure', async (t) => {
  const output = Type.Object({
    total: Type.Integer({ description: 'Items, e.g. 3' }),
    items: Type.Array(Type.Object({ path: Type.String({ description: 'Path, e.g. "a"' }) }), { description: 'List' })
  }, { description: 'Result' })

  t.strictSame(publishOutputSchema(output), {
    type: 'object',
    properties: { total: { type: 'integer' }, items: { type: 'array', items: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] } } },
    required: ['total', 'items']
  })
})

t.test('hand-written JSON Schema shapes normalise flat too: type arrays, const, $defs refs, mixed literals', async (t) => {
  const input = {
    type: 'object',
    $defs: { Mode: { type: 'string', enum: ['a', 'b'], description: 'A mode' } },
    properties: {
      maybe: { type: ['string', 'null'], description: 'Text or null' },
      either: { type: ['string', 'integer', 'null'], description: 'Two types' },
      fixed: { const: 'only', description: 'One value' },
      ratio: { anyOf: [{ const: 1 }, { const: 1.5 }], description: 'Mixed numbers' },
      mixed: { anyOf: [{ const: 'x' }, { const: 2 }], description: 'Not one type' },
      mode: { $ref: '#/$defs/Mode' },
      missing: { $ref: '#/$defs/Nope', description: 'Dangling' },
      list: { type: 'array', items: true, description: 'Anything' },
      odd: 5
    },
    required: ['fixed']
  } as unknown as TSchema
  const { schema } = normaliseSchema(input)
  const props = schema.properties as Record<string, Record<string, unknown>>

  t.strictSame(props.maybe, { type: 'string', description: 'Text or null' })
  t.strictSame(props.either.type, ['string', 'integer'], 'more than one type left stays a list (the check then rejects it)')
  t.strictSame(props.fixed, { type: 'string', enum: ['only'], description: 'One value' })
  t.strictSame(props.ratio, { type: 'number', enum: [1, 1.5], description: 'Mixed numbers' })
  t.match(props.mixed, { anyOf: [{ type: 'string', enum: ['x'] }, { type: 'integer', enum: [2] }] }, 'a literal union of several types is left for the check')
  t.strictSame(props.mode, { type: 'string', enum: ['a', 'b'], description: 'A mode' })
  t.strictSame(props.missing, { $ref: '#/$defs/Nope', description: 'Dangling' }, 'an unknown ref is left for the check to reject')
  t.strictSame(props.list, { type: 'array', items: true, description: 'Anything' })
  t.strictSame(props.odd, {}, 'a property that is not a schema becomes the empty schema')
  t.equal('$defs' in schema, false)

  const problems = checkCompatibility({ name: 'hand', inputSchema: schema })
  t.ok(problems.includes("hand.inputSchema.properties.either: 'type' is an array (string, integer)"))
  t.ok(problems.includes("hand.inputSchema.properties.missing: uses '$ref'"))
  t.ok(problems.includes("hand.inputSchema.properties.odd: property has no 'type'"))
  t.ok(problems.includes("hand.inputSchema.properties.odd: property has no 'description'"))
  t.same(checkCompatibility({ name: 'Bad-Name', inputSchema: { type: 'string' } }), ['Bad-Name: name must match ^[a-z][a-z0-9_]{0,63}$', "Bad-Name.inputSchema: root type must be 'object'"])
  const withOutput = checkCompatibility({ name: 'out', inputSchema: { type: 'object', properties: {} }, outputSchema: { type: 'object', properties: { a: { anyOf: [] } }, additionalProperties: { type: ['x', 'y'] } } })
  t.same(withOutput, ["out.outputSchema.properties.a: uses 'anyOf'", "out.outputSchema.properties.a: property has no 'type'", "out.outputSchema.additionalProperties: 'type' is an array (x, y)"], 'output schemas need no descriptions')
})

t.test('edge shapes: only injected parameters required, no properties at all, a property that is not a schema', async (t) => {
  const onlyInjected = normaliseSchema(Type.Object({ workspace: Inject('workspace') }))
  t.strictSame(onlyInjected.schema, { type: 'object', properties: {}, additionalProperties: false }, 'no empty required list is published')
  t.strictSame(normaliseSchema({ type: 'object' } as unknown as TSchema).schema, { type: 'object', additionalProperties: false, properties: {} })
  t.same(checkCompatibility({ name: 'raw', inputSchema: { type: 'object', properties: { a: 5 } } }), [], 'a non-schema property is skipped by the check, not crashed on')
})
