#!/usr/bin/env node
// Run by scripts/bundle.mjs in a child process: serves one stdio session from the CommonJS bundle
// (argv: bundle, workspace root), and on exit writes V8's code cache for every function that session
// compiled. Default flags and log level, as a user's `workspace-mcp stdio` runs, so V8 accepts the cache.
import { writeFileSync } from 'node:fs'

const [bundle, workspace] = process.argv.slice(2)
const { cacheFileOf, compileBundle } = await import(new URL('../dist/src/code-cache.js', import.meta.url).href)
const compiled = compileBundle(bundle)
process.once('exit', () => writeFileSync(cacheFileOf(bundle), compiled.script.createCachedData()))
await compiled.run().main(['--root', workspace], { codeCache: 'none' })
