#!/usr/bin/env node
// `npm run build`: tsc's output (dist/src) for the production config, then the bundle (scripts/bundle.mjs) in this
// process. build-if-stale.mjs runs the same function, so `npm start` and `npm pack` build without npm in between.
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('..', import.meta.url))

/** Compiles and bundles (tsc's output to `tscOutput`: inherit, or 2 for stderr); exits with tsc's code when it fails. */
export async function build ({ tscOutput = 'inherit' } = {}) {
  const tsc = spawnSync(process.execPath, [fileURLToPath(new URL('../node_modules/typescript/bin/tsc', import.meta.url)), '-p', 'tsconfig.build.json'], { cwd: root, stdio: ['ignore', tscOutput, 'inherit'] })
  if (tsc.status !== 0) process.exit(tsc.status ?? 1)
  await import('./bundle.mjs')
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await build()
