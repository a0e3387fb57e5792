#!/usr/bin/env node
// `npm test`'s first step: one type-checking compile of everything (src, tests, bench) that
// also emits dist/ for the bundle, then the bundle — while eslint runs beside it on the other core, and the test
// loader's transpile cache is filled (test/helpers/ts-cache-warm.mjs).
// One tsc pass instead of two (build + typecheck checked src twice). Both keep what they learnt for the
// next run — tsc's build info inside dist/ (so a deleted dist/ is rebuilt whole, never assumed fresh),
// ESLint's cache under node_modules/.cache — which takes this step from ~25 s to ~8 s when little
// changed. Output of a failed step is printed whole; the exit code is the first failure's.
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('..', import.meta.url))
const bin = (path) => fileURLToPath(new URL(`../node_modules/${path}`, import.meta.url))

/** Runs one command with its output collected; resolves to its exit code and output. */
function run (label, args) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] })
    let output = ''
    child.stdout.on('data', (chunk) => { output += chunk })
    child.stderr.on('data', (chunk) => { output += chunk })
    child.on('close', (code, signal) => resolve({ label, code: code ?? 1, signal, output }))
  })
}

/** Runs steps one after another, stopping at the first failure. */
async function sequence (...steps) {
  let last
  for (const [label, args] of steps) {
    last = await run(label, args)
    if (last.code !== 0) break
  }
  return last
}

const results = await Promise.all([
  sequence(['tsc', [bin('typescript/bin/tsc'), '-p', 'tsconfig.json', '--incremental', '--tsBuildInfoFile', 'dist/.tsbuildinfo']], ['bundle', ['scripts/bundle.mjs']]),
  run('eslint', [bin('eslint/bin/eslint.js'), '--cache', '--cache-location', 'node_modules/.cache/eslint/', '.']),
  run('ts-cache', ['test/helpers/ts-cache-warm.mjs'])
])
let exitCode = 0
for (const { label, code, signal, output } of results) {
  if (code === 0) continue
  process.stderr.write(`pretest: ${label} failed (${signal ?? `exit ${code}`})\n${output}`)
  exitCode ||= code
}
process.exitCode = exitCode
