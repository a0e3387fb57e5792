import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { ESLint } from 'eslint'
import { tools } from '../src/tool-list.js'

// The layer rules in eslint.config.js, applied to snippets as if they were files of each layer:
// a type-only import across a layer is as much a violation as a value import.

// Without the type-aware rules: a snippet linted as a file of the program would have the program checked again.
const eslint = new ESLint({ cwd: process.cwd(), overrideConfig: { languageOptions: { parserOptions: { project: null } }, rules: { '@typescript-eslint/no-floating-promises': 'off' } } })

async function restricted (filePath: string, source: string): Promise<boolean> {
  const [result] = await eslint.lintText(`${source}\nexport type Used = X\n`, { filePath })
  return result.messages.some(m => m.ruleId === 'no-restricted-imports')
}

t.test('an upward import is refused in every layer, type-only included; a downward one is allowed', async (t) => {
  const refused: Array<[string, string]> = [
    ['src/services/workspace/walk.ts', "import type { UsageGuide as X } from '../../guide/usage-guide.js'"],
    ['src/services/workspace/walk.ts', "import type { AnyTool as X } from '../../tool-api/define-tool.js'"],
    ['src/services/workspace/walk.ts', "import type { Session as X } from '../../mcp/legacy/session.js'"],
    ['src/tool-api/define-tool.ts', "import type { UsageGuide as X } from '../guide/usage-guide.js'"],
    ['src/tool-api/define-tool.ts', "import { formatCall as X } from '../tool-kit/paging.js'"],
    ['src/guide/render.ts', "import type { Session as X } from '../mcp/legacy/session.js'"],
    ['src/guide/render.ts', "import { readFiles as X } from '../tools/read-files.js'"],
    ['src/guide/render.ts', "import { formatCall as X } from '../tool-kit/paging.js'"],
    ['src/tool-kit/paging.ts', "import { readFiles as X } from '../tools/read-files.js'"],
    ['src/tool-kit/paging.ts', "import type { UsageGuide as X } from '../guide/usage-guide.js'"],
    ['src/tools/read-files.ts', "import type { UsageGuide as X } from '../guide/usage-guide.js'"],
    ['src/tools/read-files.ts', "import type { Registry as X } from '../mcp/registry/registry.js'"],
    ['src/tools/get-call-graph.ts', "import { findSymbol as X } from './find-symbol.js'"],
    ['src/mcp/legacy/session.ts', "import { readFiles as X } from '../../tools/read-files.js'"],
    ['src/mcp/legacy/session.ts', "import { formatCall as X } from '../../tool-kit/paging.js'"],
    ['src/mcp/legacy/session.ts', "import type { UsageGuide as X } from '../../guide/usage-guide.js'"],
    ['src/mcp/legacy/session.ts', "import type { FastifyInstance as X } from 'fastify'"],
    ['src/mcp/legacy/session.ts', "import type { AppOptions as X } from '../../app.js'"],
    ['src/mcp/legacy/session.ts', "import type { Auth as X } from '../../http/auth.js'"],
    ['src/base/errors.ts', "import type { Services as X } from '../services/index.js'"],
    ['src/http/mcp-http.ts', "import type { Runtime as X } from '../runtime.js'"],
    ['src/tools/read-files.ts', "import type { ManualTimers as X } from '../../test/helpers/manual-timers.js'"],
    ['src/http/mcp-http.ts', "import { testTools as X } from '../../test/helpers/engine.js'"]
  ]
  const allowed: Array<[string, string]> = [
    ['src/guide/render.ts', "import type { AnyTool as X } from '../tool-api/define-tool.js'"],
    ['src/tool-kit/paging.ts', "import type { AnyTool as X } from '../tool-api/define-tool.js'"],
    ['src/tools/read-files.ts', "import type { Tokenizer as X } from '../services/tokenizer/index.js'"],
    ['src/tools/read-files.ts', "import { formatCall as X } from '../tool-kit/paging.js'"],
    ['src/tool-list.ts', "import { readFiles as X } from './tools/read-files.js'"],
    ['src/mcp/registry/registry.ts', "import type { Services as X } from '../../services/index.js'"],
    ['src/mcp/registry/registry.ts', "import type { AnyTool as X } from '../../tool-api/define-tool.js'"],
    ['src/http/mcp-http.ts', "import type { Session as X } from '../mcp/legacy/session.js'"]
  ]
  for (const [file, source] of refused) t.equal(await restricted(file, source), true, `${file}: ${source}`)
  for (const [file, source] of allowed) t.equal(await restricted(file, source), false, `${file}: ${source}`)
})

t.test('a service folder is reached through its front door only: its other files are private to it', async (t) => {
  const refused: Array<[string, string]> = [
    ['src/tools/read-files.ts', "import type { WalkEntry as X } from '../services/workspace/walk.js'"],
    ['src/tools/read-files.ts', "import { createTokenizer as X } from '../services/tokenizer/tokenizer.js'"],
    ['src/services/code-index/code-index.ts', "import type { Tokenizer as X } from '../tokenizer/tokenizer.js'"],
    ['src/services/code-index/code-index.ts', "import { startThread as X } from '../threads/thread.js'"],
    ['src/services/index.ts', "import { createGit as X } from './git/git.js'"],
    ['src/mcp/legacy/session.ts', "import type { SearchPage as X } from '../../services/search/search.js'"],
    ['src/runtime.ts', "import type { CodeIndex as X } from './services/code-index/code-index.js'"],
    ['src/bin/index-command.ts', "import { loadSqlite as X } from '../services/code-index/index-schema.js'"],
    ['src/http/metrics.ts', "import type { CodeIndex as X } from '../services/code-index/code-index.js'"]
  ]
  const allowed: Array<[string, string]> = [
    ['src/tools/read-files.ts', "import type { WalkEntry as X } from '../services/workspace/index.js'"],
    ['src/services/code-index/code-index.ts', "import type { Tokenizer as X } from '../tokenizer/index.js'"],
    ['src/services/code-index/code-index.ts', "import type { ChunkRow as X } from './index-schema.js'"],
    ['src/services/index.ts', "import { createGit as X } from './git/index.js'"],
    ['src/http/metrics.ts', "import type { CodeIndex as X } from '../services/code-index/index.js'"]
  ]
  for (const [file, source] of refused) t.equal(await restricted(file, source), true, `${file}: ${source}`)
  for (const [file, source] of allowed) t.equal(await restricted(file, source), false, `${file}: ${source}`)
})

t.test('services name no tool in the errors they raise: the tool layer says which to call (tool-api/next-step.ts)', async (t) => {
  const names = tools.map(tool => tool.name)
  const calls: string[] = []
  for (const file of fs.readdirSync('src/services', { recursive: true, encoding: 'utf8' }).filter(f => f.endsWith('.ts'))) {
    const source = fs.readFileSync(path.join('src/services', file), 'utf8')
    for (let at = source.indexOf('toolError('); at !== -1; at = source.indexOf('toolError(', at + 1)) {
      // The call's text: up to the parenthesis that closes it.
      let depth = 0
      let end = at + 'toolError'.length
      do {
        if (source[end] === '(') depth++
        else if (source[end] === ')') depth--
        end++
      } while (depth > 0 && end < source.length)
      calls.push(`${file}: ${source.slice(at, end)}`)
    }
  }
  t.ok(calls.length >= 30, `the calls were found (${calls.length})`)
  t.same(calls.filter(call => names.some(name => call.includes(name))), [])
})
