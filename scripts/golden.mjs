#!/usr/bin/env node
// `npm run golden` (after its build): rewrites test/golden/tools-list.json from what the built bin
// serves, so adding or changing a tool is one command instead of a hand edit. It asks the bin over
// stdio, as test/transports.test.ts does, and writes the same text that test compares against.
import { execFileSync, spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('..', import.meta.url))
const cli = path.join(root, 'dist', 'bin', 'cli.js')
const golden = path.join(root, 'test', 'golden', 'tools-list.json')
const TIMEOUT_MS = 30000

/** The first tools/list page the built bin serves over stdio, as a JSON-RPC result. */
async function toolsList () {
  // An empty repository: the manifest does not depend on the workspace's files, and the git tools are listed.
  const workspace = mkdtempSync(path.join(tmpdir(), 'wmcp-golden-'))
  execFileSync('git', ['init', '-q'], { cwd: workspace, env: { PATH: process.env.PATH, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' } })
  const child = spawn(process.execPath, [cli, 'stdio', '--root', workspace], { stdio: ['pipe', 'pipe', 'pipe'] })
  let stderr = ''
  child.stderr.on('data', (chunk) => { stderr += chunk })
  const send = (message) => child.stdin.write(JSON.stringify(message) + '\n')
  try {
    return await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no tools/list answer in ${TIMEOUT_MS} ms; stderr: ${stderr}`)), TIMEOUT_MS)
      child.once('exit', (code) => {
        clearTimeout(timer)
        reject(new Error(`the bin exited (${code}) before answering; stderr: ${stderr}`))
      })
      createInterface({ input: child.stdout }).on('line', (line) => {
        const message = JSON.parse(line)
        if (message.id === 1) {
          send({ jsonrpc: '2.0', method: 'notifications/initialized' })
          send({ jsonrpc: '2.0', id: 2, method: 'tools/list' })
        } else if (message.id === 2) {
          clearTimeout(timer)
          if (message.error !== undefined) reject(new Error(`tools/list failed: ${JSON.stringify(message.error)}`))
          else resolve(message.result)
        }
      })
      send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'golden', version: '1' } } })
    })
  } finally {
    child.kill()
    rmSync(workspace, { recursive: true, force: true })
  }
}

if (!existsSync(cli)) {
  process.stderr.write(`${path.relative(root, cli)} is missing: run \`npm run golden\` (it builds first)\n`)
  process.exit(1)
}
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
