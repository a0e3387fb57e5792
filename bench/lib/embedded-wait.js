// Waits, through get_workspace_info, until a server's code index is built and every chunk it can embed has a vector.

/**
 * Polls `server` (see stdio-client.js) every 250 ms until the index is ready and embedding is done: every chunk
 * has a vector, or (`whole: false`) the count stopped growing with the embedder ready — a provider may refuse a
 * chunk for good. Resolves with the last get_workspace_info; throws when embedding failed or `limitMs` passed.
 */
export async function untilEmbedded (server, { limitMs, log, label, whole = true }) {
  const started = performance.now()
  let last = 0
  let steady = 0
  let previous = -1
  for (;;) {
    const info = (await server.call('tools/call', { name: 'get_workspace_info', arguments: {} })).result.structuredContent
    const { code_index: index, embeddings } = info
    if (embeddings?.state === 'failed') throw new Error(`embedding failed: ${embeddings.error}`)
    const done = index.state === 'ready' && embeddings.state === 'ready'
    steady = done && embeddings.vectors === previous ? steady + 1 : 0
    previous = embeddings.vectors
    if (done && (embeddings.vectors === index.chunks || (!whole && steady >= 12))) return { info, ms: performance.now() - started }
    const elapsed = performance.now() - started
    if (elapsed > limitMs) throw new Error(`${label}: embedding took longer than ${Math.round(limitMs / 60_000)} minutes`)
    if (elapsed - last > 10_000) {
      last = elapsed
      log(`  ${label}: index ${index.state} (${index.chunks} chunks), ${embeddings.vectors} vectors (${Math.round(elapsed / 1000)} s)`)
    }
    await new Promise(resolve => setTimeout(resolve, 250))
  }
}
