#!/usr/bin/env node
// `npm start [-- flags]`: builds only when a build input is newer than the bin, then runs
// `workspace-mcp serve` in this very process — so the SIGTERM/SIGINT npm forwards to its script
// reaches the server itself (a shell between them would orphan it, still bound to its port).
import { pathToFileURL } from 'node:url'
import { bin, buildIfStale } from './build-if-stale.mjs'

await buildIfStale()
process.argv = [process.argv[0], bin, 'serve', ...process.argv.slice(2)]
await import(pathToFileURL(bin).href)
