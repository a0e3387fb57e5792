// Module hooks that run the TypeScript sources for tests: TypeScript's own transpileModule (the same
// transform ts-node applies, so coverage maps to the same lines), cached on disk by content. ts-node
// transpiled every source again in each of ~100 test processes (~2.5 s of CPU per file); tsx maps
// coverage wrongly (privatenumber/tsx#433) and swc places function ranges differently from tsc.
import { createHash } from 'node:crypto'
import { existsSync, readFileSync } from 'node:fs'
import { mkdir, rename, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
// Where build tools keep caches by convention; `.tap/` is tap's to clear.
const CACHE = path.join(ROOT, 'node_modules', '.cache', 'workspace-mcp-ts')
// Bump when this file changes how it transpiles.
const FORMAT = '1'
const salt = [
  FORMAT,
  JSON.parse(readFileSync(path.join(ROOT, 'node_modules', 'typescript', 'package.json'), 'utf8')).version,
  readFileSync(path.join(ROOT, 'tsconfig.json'), 'utf8')
].join('\0')

let compiler // { ts, options }, loaded on the first cache miss only

async function loadCompiler () {
  const ts = (await import('typescript')).default
  const { config } = ts.readConfigFile(path.join(ROOT, 'tsconfig.json'), ts.sys.readFile)
  const { options } = ts.convertCompilerOptionsFromJson(config.compilerOptions, ROOT)
  // ESM out (the package is "type": "module"), an inline map whose sources sit beside the file.
  for (const key of ['outDir', 'rootDir', 'sourceMap', 'declaration', 'declarationMap']) delete options[key]
  return { ts, options: { ...options, module: ts.ModuleKind.ESNext, inlineSourceMap: true, inlineSources: true } }
}

const isTs = (url) => url.startsWith('file:') && new URL(url).pathname.endsWith('.ts')

/**
 * NodeNext imports name the emitted `.js`; in our tree the source beside it is the `.ts`. A relative `.js` import
 * from a `.ts` file is looked up as the `.ts` first: letting Node's resolver fail on the `.js` first costs an error
 * built and thrown per import (~500 per test process). An importer under tap's mock loader (its URL carries a
 * `?tapmock=` query, which keys the mock) goes through the chain, so the mock can stand in for what it imports.
 */
export async function resolve (specifier, context, next) {
  const parent = context.parentURL === undefined ? undefined : new URL(context.parentURL)
  if (parent?.protocol === 'file:' && parent.search === '' && parent.pathname.endsWith('.ts') && /^\.{1,2}\/.*\.js$/.test(specifier)) {
    const url = new URL(specifier, parent)
    url.pathname = url.pathname.slice(0, -3) + '.ts'
    if (existsSync(fileURLToPath(url))) return { url: url.href, format: 'module', shortCircuit: true }
  }
  try {
    return await next(specifier, context)
  } catch (err) {
    if (err?.code !== 'ERR_MODULE_NOT_FOUND' || !/^(\.{1,2}\/|file:)/.test(specifier) || context.parentURL === undefined) throw err
    const url = new URL(specifier, context.parentURL)
    if (!url.pathname.endsWith('.js')) throw err
    url.pathname = url.pathname.slice(0, -3) + '.ts'
    if (!existsSync(fileURLToPath(url))) throw err
    return { url: url.href, format: 'module', shortCircuit: true }
  }
}

/** The file's text, or undefined when it cannot be read. */
function readText (file) {
  try {
    return readFileSync(file, 'utf8')
  } catch {
    return undefined
  }
}

/**
 * A `.ts` file's ESM, transpiled once per content and reused by every later test process (and warmed before the
 * run by test/helpers/ts-cache-warm.mjs). The hooks have a thread of their own, so files are read synchronously:
 * four promise round trips per read cost more here.
 */
export async function transpiled (file, source = readFileSync(file, 'utf8')) {
  const key = createHash('sha256').update(salt).update('\0').update(file).update('\0').update(source).digest('hex')
  const cached = path.join(CACHE, `${key}.js`)
  let code = readText(cached)
  if (code === undefined) {
    compiler ??= await loadCompiler()
    code = compiler.ts.transpileModule(source, { fileName: file, compilerOptions: compiler.options }).outputText
    // Write then rename: two test processes missing at once never read half a file. A process that may not write
    // there (a server the tests run as nobody) just goes without: the cache only saves time.
    const partial = `${cached}.${process.pid}.tmp`
    await mkdir(CACHE, { recursive: true })
      .then(() => writeFile(partial, code))
      .then(() => rename(partial, cached))
      .catch(() => rm(partial, { force: true }).catch(() => {}))
  }
  return code
}

/** `.ts` files load as ESM, from transpiled(). */
export async function load (url, context, next) {
  if (!isTs(url)) return next(url, context)
  return { format: 'module', source: await transpiled(fileURLToPath(url)), shortCircuit: true }
}
