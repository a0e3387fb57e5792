/** Query vectors by model, length and text, the most recently used kept: a result set's pages share one. */
export interface QueryVectors {
  get(model: string, dims: number | undefined, text: string): Float32Array | undefined
  set(model: string, dims: number, text: string, vector: Float32Array): void
}

/** An LRU of at most `max` query vectors. */
export function createQueryVectors (max: number): QueryVectors {
  // A Map iterates in insertion order: re-inserting on use keeps the least recently used first.
  const vectors = new Map<string, Float32Array>()
  const keyOf = (model: string, dims: number | undefined, text: string): string => JSON.stringify([model, dims, text])
  return {
    get (model, dims, text) {
      const key = keyOf(model, dims, text)
      const vector = vectors.get(key)
      if (vector === undefined) return undefined
      vectors.delete(key)
      vectors.set(key, vector)
      return vector
    },
    set (model, dims, text, vector) {
      const key = keyOf(model, dims, text)
      vectors.delete(key)
      vectors.set(key, vector)
      if (vectors.size > max) vectors.delete(vectors.keys().next().value as string)
    }
  }
}
