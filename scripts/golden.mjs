#!/usr/bin/env node
// `npm run golden`: builds when the build is stale (as `npm start` and `npm pack` do), then rewrites
// test/golden/tools-list.json from the built `tools --json` — the bytes the bin serves as tools/list
// (test/bin/stdio.test.ts holds the two equal) — so adding or changing a tool is one command instead of a hand edit.
import { execFileSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { buildIfStale } from './build-if-stale.mjs'

const root = fileURLToPath(new URL('..', import.meta.url))
const golden = path.join(root, 'test', 'golden', 'tools-list.json')

/** The manifest the built command line prints, as a tools/list result. */
async function toolsList () {
  // An empty repository: the manifest does not depend on the workspace's files, and the git tools are listed.
  const workspace = mkdtempSync(path.join(tmpdir(), 'wmcp-golden-'))
  execFileSync('git', ['init', '-q'], { cwd: workspace, env: { PATH: process.env.PATH, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' } })
  try {
    const { run } = await import(pathToFileURL(path.join(root, 'dist', 'src', 'bin', 'run.js')).href)
    let stdout = ''
    let stderr = ''
    const io = { stdout: { write: (text) => { stdout += text } }, stderr: { write: (text) => { stderr += text } } }
    await run(['tools', '--json', '--root', workspace], io)
    if ((io.exitCode ?? 0) !== 0) throw new Error(`tools --json exited ${io.exitCode}: ${stderr}`)
    return { tools: JSON.parse(stdout) }
  } finally {
    rmSync(workspace, { recursive: true, force: true })
  }
}

await buildIfStale()
const result = await toolsList().catch((err) => {
  process.stderr.write(`npm run golden: ${err.message}\n`)
  process.exit(1)
})
const before = existsSync(golden) ? JSON.parse(readFileSync(golden, 'utf8')).tools ?? [] : []
writeFileSync(golden, JSON.stringify(result, null, 2) + '\n')

const text = (tool) => JSON.stringify(tool)
const old = new Map(before.map(tool => [tool.name, text(tool)]))
const names = result.tools.map(tool => tool.name)
const added = names.filter(name => !old.has(name))
const removed = [...old.keys()].filter(name => !names.includes(name))
const changed = result.tools.filter(tool => old.has(tool.name) && old.get(tool.name) !== text(tool)).map(tool => tool.name)
const list = (label, items) => items.length === 0 ? [] : [`${label} ${items.join(', ')}`]
const changes = [...list('added', added), ...list('removed', removed), ...list('changed', changed)]
process.stdout.write(`${path.relative(root, golden)}: ${names.length} tools; ${changes.length === 0 ? 'no change' : changes.join('; ')}\n`)
