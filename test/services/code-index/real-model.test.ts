import fs from 'node:fs'
import path from 'node:path'
import pino from 'pino'
import t from 'tap'
import { loadConfig } from '../../../src/base/config.js'
import { createCodeIndex } from '../../../src/services/code-index/code-index.js'
import { semanticService } from '../../../src/services/code-index/index.js'
import { loadSqlite } from '../../../src/services/code-index/index-schema.js'
import type { SemanticSearch } from '../../../src/services/code-index/semantic.js'
import { locateTreeSitter, type TreeSitterLocation } from '../../../src/services/symbols/parser.js'
import { createTokenizer } from '../../../src/services/tokenizer/tokenizer.js'
import { createWorkspace } from '../../../src/services/workspace/workspace.js'
import { searchSemantic } from '../../../src/tools/search-semantic.js'
import { missingSharedModel, startSharedModel } from '../../../bench/lib/embedding-provider.js'
import { tempDir, toolContext } from '../../helpers/workspace-fixture.js'
import { waitUntil } from '../../helpers/wait.js'

// Search by meaning with a trained model: the shared Universal Sentence Encoder Lite (../shared/tools/embeddings,
// set up by its setup.sh), served by its own python process — the one thing here no fake can stand in for. Each
// file says what it does in words no query below uses, so only the meaning can rank it.

const missing = missingSharedModel()

const FILES: Record<string, string> = {
  'src/args.ts': '/** Reads the options given on the command line. */\nexport function parseArgs (argv: string[]): Map<string, string> {\n  return new Map(argv.map(a => [a, a]))\n}\n',
  'src/net.ts': '/** Opens a TCP link to the server. */\nexport function dial (address: string, port: number): void {\n  void address\n  void port\n}\n',
  'src/pages.ts': '/** Frees the memory pages back to the allocator. */\nexport function releasePages (count: number): number {\n  return count\n}\n'
}

t.test('search_semantic with a trained model: a paraphrase with no word in common finds its code first', { skip: missing === undefined ? false : `the shared embedding model is not set up here (${missing} is missing): bash ../shared/tools/embeddings/setup.sh, or EMBEDDINGS_TOOLS / EMBED_HOME` }, async (t) => {
  const model = await startSharedModel()
  t.teardown(async () => { await model.close() })
  const url = model.url
  const root = tempDir(t, 'wmcp-real-model-')
  const state = tempDir(t, 'wmcp-real-model-state-')
  for (const [name, text] of Object.entries(FILES)) {
    fs.mkdirSync(path.dirname(path.join(root, name)), { recursive: true })
    fs.writeFileSync(path.join(root, name), text)
  }
  const log = pino({ level: 'silent' })
  const workspace = await createWorkspace({ root, log })
  const index = createCodeIndex({ workspace, treeSitter: locateTreeSitter() as TreeSitterLocation, log, sqlite: loadSqlite() as NonNullable<ReturnType<typeof loadSqlite>>, file: path.join(state, 'index.sqlite') })
  const semantic = semanticService(loadConfig({ embeddingsUrl: url, embeddingsModel: 'use-lite' }, {}, root), index, workspace, log, {}) as SemanticSearch
  t.teardown(async () => { await semantic.close(); await index.close() })
  await index.ready(60_000, new AbortController().signal)
  // The vectors are counted as they land; the state turns ready a moment after the last one.
  // A minute at most: the model embeds ~50 chunks/s on a quiet core, far fewer beside other test files.
  await waitUntil(() => semantic.status().vectors >= index.status().chunks && semantic.status().state === 'ready', 'every chunk embedded by the model', 60_000, 20)
  t.match(semantic.status(), { state: 'ready', dims: 512, vectors: 3 }, 'every chunk embedded by the model')

  const tokenizer = createTokenizer({ workers: 0 })
  for (const [query, expected] of [['connect a socket to a remote machine', 'src/net.ts'], ['parse flags typed after the program name', 'src/args.ts'], ['give physical RAM back to the buddy system', 'src/pages.ts']]) {
    const result = await searchSemantic.run({ workspace, codeIndex: index, semantic, tokenizer, query } as never, toolContext())
    const first = (result.structuredContent as { results: Array<{ path: string }> }).results[0]?.path
    t.equal(first, expected, `"${query}" finds ${expected} first, by meaning alone`)
  }
  await tokenizer.close()
})
