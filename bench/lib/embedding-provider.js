// The embeddings provider a bench measures with: the one given by URL (BENCH_EMBEDDINGS_URL, with
// BENCH_EMBEDDINGS_MODEL and an optional BENCH_EMBEDDINGS_KEY), else the shared real model
// (../shared/tools/embeddings: Universal Sentence Encoder Lite served offline), set up and started here.
import { execFileSync, spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { createServer } from 'node:net'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const repo = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..')
/** Where the shared model's tools are: EMBEDDINGS_TOOLS, else ../shared/tools/embeddings beside the project. */
const TOOLS = process.env.EMBEDDINGS_TOOLS ?? path.join(repo, '..', 'shared', 'tools', 'embeddings')
const HOME = process.env.EMBED_HOME ?? path.join(process.env.SCRATCH ?? '/tmp', 'use-lite-embeddings')

/** A free port on 127.0.0.1 (the shared server takes a port number, not 0). */
async function freePort () {
  const server = createServer()
  await new Promise(resolve => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address()
  await new Promise(resolve => server.close(resolve))
  return port
}

/** The provider's vector for one text (the bench's query vectors), or an Error saying what it answered. */
export async function embedText ({ url, model, key }, text) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(key !== undefined ? { authorization: `Bearer ${key}` } : {}) },
    body: JSON.stringify({ model, input: [text] }),
    signal: AbortSignal.timeout(30_000)
  })
  if (!response.ok) throw new Error(`${url} answered HTTP ${response.status}: ${(await response.text()).slice(0, 200)}`)
  return (await response.json()).data[0].embedding
}

/** Asks the provider for one vector: its dimensions, or an Error saying what it answered. */
export async function probeProvider (provider) {
  return (await embedText(provider, 'probe')).length
}

/** The first file the shared model needs that is not there (its tools, venv, weights), or undefined when it is set up. */
export function missingSharedModel () {
  return [path.join(TOOLS, 'server.py'), path.join(HOME, 'venv', 'bin', 'python'), path.join(HOME, 'model', 'model.json')].find(p => !existsSync(p))
}

/** Serves the shared model (set up already) on a free port of 127.0.0.1: `{ url, model, name, dims, close() }`. */
export async function startSharedModel () {
  const port = await freePort()
  const child = spawn(path.join(HOME, 'venv', 'bin', 'python'), [path.join(TOOLS, 'server.py'), '--model-dir', path.join(HOME, 'model'), '--port', String(port)], { stdio: ['ignore', 'ignore', 'pipe'] })
  let stderr = ''
  child.stderr.on('data', (chunk) => { stderr = (stderr + chunk).slice(-2000) })
  const exited = new Promise(resolve => child.once('exit', resolve))
  const provider = { url: `http://127.0.0.1:${port}/v1/embeddings`, model: 'use-lite' }
  for (const started = Date.now(); ;) {
    try {
      const dims = await probeProvider(provider)
      return {
        ...provider,
        name: 'Universal Sentence Encoder Lite (shared model, 512 dims, first 128 tokens)',
        dims,
        close: async () => { child.kill(); await exited }
      }
    } catch (err) {
      if (child.exitCode !== null || Date.now() - started > 120_000) {
        child.kill()
        throw new Error(`the shared model did not start: ${err.message}\n${stderr}`)
      }
      await new Promise(resolve => setTimeout(resolve, 500))
    }
  }
}

/**
 * The provider to measure with: `{ url, model, key?, name, dims, close() }`. Without BENCH_EMBEDDINGS_URL the
 * shared model is set up (its idempotent setup.sh) and served on a free port until close().
 */
export async function benchProvider (log) {
  const given = process.env.BENCH_EMBEDDINGS_URL
  if (given !== undefined) {
    const provider = { url: given, model: process.env.BENCH_EMBEDDINGS_MODEL ?? 'default', key: process.env.BENCH_EMBEDDINGS_KEY, close: async () => {} }
    return { ...provider, name: `${provider.model} at ${given}`, dims: await probeProvider(provider) }
  }
  if (!existsSync(path.join(TOOLS, 'server.py'))) {
    throw new Error(`no embeddings provider: set BENCH_EMBEDDINGS_URL (and BENCH_EMBEDDINGS_MODEL), or put the shared model's tools at ${TOOLS} (EMBEDDINGS_TOOLS)`)
  }
  if (missingSharedModel() !== undefined) {
    log(`retrieval: setting up the shared model in ${HOME} (bash ${path.join(TOOLS, 'setup.sh')})`)
    execFileSync('bash', [path.join(TOOLS, 'setup.sh')], { env: { ...process.env, EMBED_HOME: HOME }, stdio: ['ignore', 'ignore', 'inherit'] })
  }
  return await startSharedModel()
}
