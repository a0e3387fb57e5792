// `node --import ./test/helpers/ts-loader.mjs file.test.ts`: runs a TypeScript test (see ts-hooks.mjs).
import { register, syncBuiltinESMExports } from 'node:module'
import workerThreads from 'node:worker_threads'

register('./ts-hooks.mjs', import.meta.url)

// A thread inherits the process's flags, tap's own `--import`s among them (its mock loader and process-info
// recorder) and source maps: ~0.5 s of CPU per thread against ~0.1 s without, and the suite starts some 400 threads
// (code index, parsers, token counting, walks, vectors, PDFs). A thread started without flags of its own gets this loader
// only; coverage reaches it through NODE_V8_COVERAGE, which every thread of the process reads.
const threadArgs = process.execArgv.filter(arg => !/[\\/]@tapjs[\\/]/.test(arg) && arg !== '--enable-source-maps')
if (threadArgs.length < process.execArgv.length) {
  const Worker = workerThreads.Worker
  workerThreads.Worker = class extends Worker {
    constructor (url, options = {}) {
      super(url, options.execArgv === undefined ? { ...options, execArgv: threadArgs } : options)
    }
  }
  syncBuiltinESMExports()
}
