import t from 'tap'
import { Type } from '@sinclair/typebox'
import { checkCompatibility, normaliseSchema, publishOutputSchema } from '../../src/mcp/schema.js'
import { Inject } from '../../src/tools/define-tool.js'

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
