import fs from 'node:fs'
import path from 'node:path'
import pino from 'pino'
import type { Test } from 'tap'
import { createCodeIndex, type CodeIndex } from '../../src/services/code-index/code-index.js'
import { createEmbeddingProvider, type EmbeddingsSettings } from '../../src/services/code-index/embeddings.js'
import { loadSqlite } from '../../src/services/code-index/index-schema.js'
import { createSemanticSearch, type SemanticSearch } from '../../src/services/code-index/semantic.js'
import { locateTreeSitter, type TreeSitterLocation } from '../../src/services/symbols/parser.js'
import { createWorkspace } from '../../src/services/workspace/workspace.js'
import { startFakeEmbeddings, type FakeEmbeddings } from './fake-embeddings.js'
import { manualTimers, type ManualTimers } from './manual-timers.js'
import { tempDir } from './workspace-fixture.js'
import { waitUntil } from './wait.js'

// Semantic search over a small workspace with the fake provider in this process and recovery timers the test
// fires: what test/services/code-index/semantic*.test.ts share.

const log = pino({ level: 'silent' })
const sqlite = loadSqlite() as NonNullable<ReturnType<typeof loadSqlite>>
const where = locateTreeSitter() as TreeSitterLocation

/** The workspace every fixture starts from. */
export const FILES: Record<string, string> = {
  'src/upload.ts': 'export class Uploader {\n  async retryFailedUpload (path: string): Promise<number> {\n    // retry each failed upload with backoff\n    return 3\n  }\n}\n',
  'src/config.py': 'def parse_config(path):\n    return {}\n',
  'src/windows.ts': '\uFEFFexport function crlfLines () {\r\n  return "carriage returns"\r\n}\r\n',
  'src/copy.ts': 'export function same () { return 1 }\n',
  'lib/copy.ts': 'export function same () { return 1 }\n'
}

/** A fixture: its root, index, semantic search, fake provider and timers. */
export interface Semantic { root: string, index: CodeIndex, semantic: SemanticSearch, fake: FakeEmbeddings, clock: ManualTimers }

/** Writes FILES to a temp root and starts an index and semantic search over it, closed at the test's end. */
export async function semanticFixture (t: Test, options: { settings?: Partial<EmbeddingsSettings>, maxChunks?: number, staleMs?: number, fake?: Parameters<typeof startFakeEmbeddings>[0], path?: string } = {}): Promise<Semantic> {
  const root = tempDir(t, 'wmcp-semantic-')
  for (const [name, text] of Object.entries(FILES)) {
    fs.mkdirSync(path.dirname(path.join(root, name)), { recursive: true })
    fs.writeFileSync(path.join(root, name), text)
  }
  const fake = await startFakeEmbeddings(options.fake)
  t.teardown(() => fake.close())
  const workspace = await createWorkspace({ root, log })
  const file = path.join(tempDir(t, 'wmcp-semantic-state-'), 'index.sqlite')
  const index = createCodeIndex({ workspace, treeSitter: where, log, staleMs: options.staleMs ?? 0, sqlite, file })
  const url = new URL(`${fake.url}${options.path ?? '/v1/embeddings'}`)
  const provider = createEmbeddingProvider({ url, api: url.pathname === '/api/embed' ? 'ollama' : 'openai', model: 'fake', batchSize: 2, timeoutMs: 5000, retries: 0, retryDelayMs: 1, ...options.settings })
  // The recovery's timers fire when the test says: each backoff is seen as the delay asked for.
  const clock = manualTimers()
  const semantic = createSemanticSearch({ index, workspace, provider, log, maxChunks: options.maxChunks ?? 1000, timers: clock.timers })
  t.teardown(async () => { await semantic.close(); await index.close() })
  return { root, index, semantic, fake, clock }
}

/** Starts a rescan (the index is always stale here), waits for it and for the embedding run after it to end. */
export async function settled (s: Pick<Semantic, 'index' | 'semantic'>): Promise<void> {
  const before = s.index.status().lastScan ?? 0
  await s.index.ready(60_000, new AbortController().signal)
  await waitUntil(() => (s.index.status().lastScan ?? 0) !== before, 'a new scan to end', 60_000)
  // The scan's end starts the run in the same turn: its state is already `embedding` here.
  await waitUntil(() => s.semantic.status().state !== 'waiting' && s.semantic.status().state !== 'embedding', 'the embedding run to end', 60_000)
}
/** Texts the fake was asked to embed so far. */
export const inputs = (fake: FakeEmbeddings): number => fake.requests.reduce((n, r) => n + r.inputs.length, 0)
/** A signal that never aborts. */
export const signal = (): AbortSignal => new AbortController().signal
