// The tools every HTTP/stdio contender serves: one `echo` tool for tools/call and 200 synthetic
// tools for the tools/list scenario, defined once as plain data and turned into TypeBox (ours)
// or zod (SDK peer) schemas, so both servers publish the same parameters.
import { Type } from '@sinclair/typebox'

/** Number of tools in the tools/list scenario. */
export const LIST_SIZE = 200

/** Arguments the tools/call scenario sends to `echo`. */
export const ECHO_ARGS = { text: 'hello' }

/** The result every contender returns for the echo call (the floor sends exactly this). */
export const ECHO_RESULT = { content: [{ type: 'text', text: ECHO_ARGS.text }] }

const VERBS = ['get', 'list', 'read', 'search', 'find', 'count', 'describe', 'compare']
const NOUNS = ['file', 'folder', 'symbol', 'commit', 'branch', 'issue', 'note', 'section', 'record', 'table', 'entry', 'page', 'label', 'owner', 'range', 'token', 'region', 'module', 'report', 'metric', 'event', 'query', 'index', 'link', 'tag']

/** Plain descriptions of the synthetic tools: name, description and three parameters. */
export function syntheticSpecs (count = LIST_SIZE) {
  const specs = []
  for (let i = 0; i < count; i++) {
    const verb = VERBS[i % VERBS.length]
    const noun = NOUNS[Math.floor(i / VERBS.length) % NOUNS.length]
    const name = `${verb}_${noun}_${String(i).padStart(3, '0')}`
    specs.push({
      name,
      title: `${verb} ${noun} ${i}`,
      description: `${verb[0].toUpperCase()}${verb.slice(1)} one ${noun} of the workspace by path and return it as Markdown; pass several paths to batch. Synthetic benchmark tool number ${i}.`
    })
  }
  return specs
}

/** Ours: `defineTool` objects (plain data; the registry derives the wire schema). */
export function oursTools ({ list }) {
  const echo = {
    name: 'echo',
    title: 'Echo',
    category: 'fixture',
    description: 'Echo the given text back unchanged; used by the benchmark to measure the transport and engine alone.',
    annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    input: Type.Object({ text: Type.String({ maxLength: 1000, description: 'Text to return, e.g. "hello"' }) }),
    run: ({ text }) => ({ content: [{ type: 'text', text }] })
  }
  if (!list) return [echo]
  const synthetic = syntheticSpecs(LIST_SIZE - 1).map(spec => ({
    ...spec,
    category: 'fixture',
    annotations: { readOnlyHint: true, openWorldHint: false },
    input: Type.Object({
      path: Type.String({ minLength: 1, maxLength: 4096, description: 'Path relative to the workspace root, e.g. "src/app.ts"' }),
      limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20, description: 'Most items to return, e.g. 20' })),
      recursive: Type.Optional(Type.Boolean({ default: false, description: 'Descend into sub-folders, e.g. true' }))
    }),
    run: () => ({ content: [{ type: 'text', text: 'ok' }] })
  }))
  return [echo, ...synthetic]
}

/**
 * The SDK peers: registers the same tools on an SDK `McpServer` with zod schemas — raw shapes for
 * SDK v1, `z.object` (a Standard Schema) for SDK v2 (`objects: true`).
 */
export function registerSdkTools (server, z, { list, objects = false }) {
  const input = (shape) => objects ? z.object(shape) : shape
  server.registerTool('echo', {
    title: 'Echo',
    description: 'Echo the given text back unchanged; used by the benchmark to measure the transport and engine alone.',
    inputSchema: input({ text: z.string().max(1000).describe('Text to return, e.g. "hello"') }),
    annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false }
  }, async ({ text }) => ({ content: [{ type: 'text', text }] }))
  if (!list) return
  for (const spec of syntheticSpecs(LIST_SIZE - 1)) {
    server.registerTool(spec.name, {
      title: spec.title,
      description: spec.description,
      inputSchema: input({
        path: z.string().min(1).max(4096).describe('Path relative to the workspace root, e.g. "src/app.ts"'),
        limit: z.number().int().min(1).max(100).default(20).describe('Most items to return, e.g. 20'),
        recursive: z.boolean().default(false).describe('Descend into sub-folders, e.g. true')
      }),
      annotations: { readOnlyHint: true, openWorldHint: false }
    }, async () => ({ content: [{ type: 'text', text: 'ok' }] }))
  }
}
