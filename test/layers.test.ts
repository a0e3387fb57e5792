import t from 'tap'
import { ESLint } from 'eslint'

// The layer rules in eslint.config.js, applied to snippets as if they were files of each layer:
// a type-only import across a layer is as much a violation as a value import.

const eslint = new ESLint({ cwd: process.cwd() })

async function restricted (filePath: string, source: string): Promise<boolean> {
  const [result] = await eslint.lintText(`${source}\nexport type Used = X\n`, { filePath })
  return result.messages.some(m => m.ruleId === 'no-restricted-imports')
}

t.test('an upward import is refused in every layer, type-only included; a downward one is allowed', async (t) => {
  const refused: Array<[string, string]> = [
    ['src/services/walk.ts', "import type { UsageGuide as X } from '../guide/usage-guide.js'"],
    ['src/services/walk.ts', "import type { AnyTool as X } from '../tools/define-tool.js'"],
    ['src/services/walk.ts', "import type { Session as X } from '../mcp/session.js'"],
    ['src/guide/render.ts', "import type { Session as X } from '../mcp/session.js'"],
    ['src/guide/render.ts', "import { readFiles as X } from '../tools/read-files.js'"],
    ['src/tools/read-files.ts', "import type { UsageGuide as X } from '../guide/usage-guide.js'"],
    ['src/tools/read-files.ts', "import type { Registry as X } from '../mcp/registry.js'"],
    ['src/mcp/session.ts', "import { readFiles as X } from '../tools/read-files.js'"],
    ['src/mcp/session.ts', "import type { UsageGuide as X } from '../guide/usage-guide.js'"],
    ['src/mcp/session.ts', "import type { FastifyInstance as X } from 'fastify'"],
    ['src/mcp/session.ts', "import type { AppOptions as X } from '../app.js'"],
    ['src/errors.ts', "import type { Services as X } from './services/index.js'"],
    ['plugins/mcp-http.ts', "import type { Runtime as X } from '../src/runtime.js'"]
  ]
  const allowed: Array<[string, string]> = [
    ['src/guide/render.ts', "import type { AnyTool as X } from '../tools/define-tool.js'"],
    ['src/tools/read-files.ts', "import type { Tokenizer as X } from '../services/tokenizer.js'"],
    ['src/mcp/registry.ts', "import type { Services as X } from '../services/index.js'"],
    ['plugins/mcp-http.ts', "import type { Session as X } from '../src/mcp/session.js'"]
  ]
  for (const [file, source] of refused) t.equal(await restricted(file, source), true, `${file}: ${source}`)
  for (const [file, source] of allowed) t.equal(await restricted(file, source), false, `${file}: ${source}`)
})
