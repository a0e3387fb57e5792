// Node 20 has no compile cache for ES modules (module.enableCompileCache arrived in 22.1), so the
// stdio command also ships as one CommonJS bundle run through vm.Script with V8's code cache: the
// bytecode of every function the build's training session ran, so a cold start skips parsing and
// compiling them. V8 rejects a cache made by another V8 version or with other flags; the script then
// compiles from source as usual, only slower.
import { existsSync, readFileSync } from 'node:fs'
import Module, { createRequire } from 'node:module'
import path from 'node:path'
import { Script } from 'node:vm'

/** The file V8's code cache for `bundle` is kept in. */
export const cacheFileOf = (bundle: string): string => `${bundle}.cache`

/** A CommonJS bundle compiled (with its code cache when one is given) but not yet run. */
export interface CompiledBundle {
  script: Script
  /** True when V8 refused the given cache (another Node version or other V8 flags). */
  cacheRejected: boolean
  /** Runs the bundle once and returns its module.exports. */
  run: () => unknown
}

/** Compiles a CommonJS bundle as Node's own loader would wrap it. */
export function compileBundle (file: string, cachedData?: Buffer): CompiledBundle {
  // A shebang is not JavaScript once the source is wrapped in a function.
  const source = readFileSync(file, 'utf8').replace(/^#!.*/, '')
  const script = new Script(Module.wrap(source), { filename: file, cachedData })
  const run = (): unknown => {
    const module = { exports: {} }
    const body = script.runInThisContext() as (...args: unknown[]) => void
    body.call(module.exports, module.exports, createRequire(file), module, file, path.dirname(file))
    return module.exports
  }
  return { script, cacheRejected: script.cachedDataRejected === true, run }
}

/** A bundle's exports, and what became of its code cache. */
export interface LoadedBundle<T> {
  exports: T
  cache: 'none' | 'accepted' | 'rejected'
}

/** Runs `bundle` with the code cache beside it; `fallback` when the build made no bundle (tsc output). */
export async function loadBundle<T> (bundle: string, fallback: () => Promise<T>): Promise<LoadedBundle<T>> {
  if (!existsSync(bundle)) return { exports: await fallback(), cache: 'none' }
  const cacheFile = cacheFileOf(bundle)
  const cachedData = existsSync(cacheFile) ? readFileSync(cacheFile) : undefined
  const compiled = compileBundle(bundle, cachedData)
  const cache = cachedData === undefined ? 'none' : compiled.cacheRejected ? 'rejected' : 'accepted'
  return { exports: compiled.run() as T, cache }
}
