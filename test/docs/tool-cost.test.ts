import t from 'tap'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import pino from 'pino'
import { createRuntime } from '../../src/runtime.js'
import { loadConfig } from '../../src/base/config.js'
import { closeServices, createServices } from '../../src/services/index.js'
import { commitAll } from '../helpers/git-repo.js'

// docs/configuration.md states what a tool list costs a client's context (the bytes of `tools --json` and their
// cl100k tokens) for the full list and a few chosen sets; this test computes the table, so it cannot drift.
// After a tool or a description changes: UPDATE_DOCS=1 npm test -- test/docs/tool-cost.test.ts

const require = createRequire(import.meta.url)
const { Tiktoken } = require('js-tiktoken/lite') as { Tiktoken: new (ranks: unknown) => { encode: (text: string) => number[] } }
const enc = new Tiktoken(require('js-tiktoken/ranks/cl100k_base'))

// A git work tree of its own, and an embeddings provider named (never reached: nothing is indexed here), so every
// tool is listed wherever the test runs (a linked work tree's .git is a file, which the history tools refuse).
const ROOT = mkdtempSync(join(tmpdir(), 'wmcp-cost-'))
writeFileSync(join(ROOT, 'README.md'), '# Cost\n')
commitAll(ROOT, 'init')
const PROVIDER = { embeddingsUrl: 'http://127.0.0.1:9/v1', embeddingsModel: 'm' }
const DOC = fileURLToPath(new URL('../../docs/configuration.md', import.meta.url))
const START = '<!-- tool-cost:start (computed by test/docs/tool-cost.test.ts; do not edit) -->'
const END = '<!-- tool-cost:end -->'

/** The sets the table prices: what a user would choose between. */
const SETS: Array<{ label: string, flags: { tools?: string, excludeTools?: string } }> = [
  { label: 'every tool (the default, with an embeddings provider: `search_semantic` is listed only with one)', flags: {} },
  { label: '`--exclude-tools git_log,git_show,git_diff,git_blame` (no history)', flags: { excludeTools: 'git_log,git_show,git_diff,git_blame' } },
  { label: '`--tools find_symbol,find_references,get_symbols,search_code,read_files` (code navigation)', flags: { tools: 'find_symbol,find_references,get_symbols,search_code,read_files' } },
  { label: '`--tools list_directory,find_files,search_regex,read_files` (files and text)', flags: { tools: 'list_directory,find_files,search_regex,read_files' } },
  { label: '`--tools read_files`', flags: { tools: 'read_files' } }
]

t.test('docs/configuration.md prices the full tool list and the chosen sets as they are served', async (t) => {
  const log = pino({ level: 'silent' })
  const services = await createServices(loadConfig({ root: ROOT, ...PROVIDER }, {}), log)
  t.teardown(() => closeServices(services))
  const rows = ['| tools served | count | `tools --json` bytes | cl100k tokens |', '|---|---:|---:|---:|']
  for (const set of SETS) {
    const runtime = await createRuntime(loadConfig({ root: ROOT, ...PROVIDER, ...set.flags }, {}), log, { services })
    const json = runtime.registry.catalog.manifestJson()
    rows.push(`| ${set.label} | ${runtime.registry.tools.length} | ${Buffer.byteLength(json).toLocaleString('en')} | ${enc.encode(json).length.toLocaleString('en')} |`)
  }
  const table = `${START}\n${rows.join('\n')}\n${END}`
  const doc = readFileSync(DOC, 'utf8')
  const present = doc.slice(doc.indexOf(START), doc.indexOf(END) + END.length)
  if (process.env.UPDATE_DOCS === '1') writeFileSync(DOC, doc.replace(present, table))
  t.equal(process.env.UPDATE_DOCS === '1' ? table : present, table, 'the table is current (UPDATE_DOCS=1 rewrites it)')
  t.match(table, /\| every tool [^|]*\| 18 \|/, 'every product tool is priced')
})
