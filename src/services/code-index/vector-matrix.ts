/** A chunk near a query: its id and cosine similarity (−1…1). */
export interface Nearest {
  id: number
  similarity: number
}

/** Unit vectors of chunks in one growing Float32Array, searched exhaustively: exact cosine, nothing to build. */
export interface VectorMatrix {
  readonly dims: number
  /** Rows held: chunks with a vector. */
  readonly size: number
  add(chunk: number, file: number, vector: Float32Array): void
  clear(): void
  /** The `k` rows most similar to `query` (unit length) among those `allow` admits by file; ties by chunk id. */
  nearest(query: Float32Array, k: number, allow?: (file: number) => boolean): Nearest[]
}

/** An empty matrix of `dims`-long vectors. */
export function createVectorMatrix (dims: number): VectorMatrix {
  let capacity = 1024
  let data = new Float32Array(capacity * dims)
  let chunks = new Int32Array(capacity)
  let files = new Int32Array(capacity)
  let size = 0
  return {
    dims,
    get size () { return size },
    add (chunk, file, vector) {
      if (size === capacity) {
        capacity *= 2
        const grown = new Float32Array(capacity * dims)
        grown.set(data)
        data = grown
        const grownChunks = new Int32Array(capacity)
        grownChunks.set(chunks)
        chunks = grownChunks
        const grownFiles = new Int32Array(capacity)
        grownFiles.set(files)
        files = grownFiles
      }
      data.set(vector, size * dims)
      chunks[size] = chunk
      files[size] = file
      size++
    },
    clear () {
      size = 0
    },
    nearest (query, k, allow) {
      // The best k so far, worst last: a row enters only when it beats the worst, so most rows cost one compare.
      const best: Nearest[] = []
      for (let row = 0; row < size; row++) {
        if (allow !== undefined && !allow(files[row])) continue
        let dot = 0
        const base = row * dims
        for (let d = 0; d < dims; d++) dot += data[base + d] * query[d]
        const id = chunks[row]
        if (best.length === k) {
          const worst = best[k - 1]
          if (dot < worst.similarity || (dot === worst.similarity && id > worst.id)) continue
          best.pop()
        }
        let at = best.length
        while (at > 0 && (best[at - 1].similarity < dot || (best[at - 1].similarity === dot && best[at - 1].id > id))) at--
        best.splice(at, 0, { id, similarity: dot })
      }
      return best
    }
  }
}
