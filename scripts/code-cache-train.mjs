#!/usr/bin/env node
// Run by scripts/bundle.mjs in a child process: serves one stdio session from the CommonJS bundle
// (argv: bundle, workspace root), and on exit writes V8's code cache for every function that session
// compiled. Default V8 flags and log level, as a user's `workspace-mcp stdio` runs, so V8 accepts the cache.
import { writeFileSync } from 'node:fs'

const [bundle, workspace] = process.argv.slice(2)
const { cacheFileOf, compileBundle } = await import(new URL('../dist/src/code-cache.js', import.meta.url).href)
const compiled = compileBundle(bundle)
process.once('exit', () => writeFileSync(cacheFileOf(bundle), compiled.script.createCachedData()))
// Without the code index: its thread holds SQLite, and a training run that ends while the thread is still in it
// can abort at exit (a native error during teardown) on a loaded machine; the session's own functions are the point.
await compiled.run().main(['--root', workspace, '--code-index', 'off'], { codeCache: 'none' })
