// The fake embeddings provider (bench/lib/fake-embeddings.js) over the code index's own tokens: texts that share
// identifiers are close. It hashes words; a test that needs meaning runs the real model (test/services/code-index/real-model.test.ts).
import { hashedEmbedding, startFakeEmbeddings as startFake, type FakeEmbeddings, type FakeEmbeddingsOptions } from '../../bench/lib/fake-embeddings.js'
import { codeTokens } from '../../src/services/code-index/index.js'

export type { FakeEmbeddings, FakeEmbeddingsOptions }

/** The fake's vector of a text: its code tokens, hashed. */
export const fakeEmbedding = (text: string, dims: number): number[] => hashedEmbedding(codeTokens(text), dims)

/** Starts the fake provider on 127.0.0.1. */
export async function startFakeEmbeddings (options: FakeEmbeddingsOptions = {}): Promise<FakeEmbeddings> {
  return await startFake(options, fakeEmbedding)
}
