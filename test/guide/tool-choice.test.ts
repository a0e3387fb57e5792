import t from 'tap'
import fc from 'fast-check'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pino from 'pino'
import { createRuntime } from '../../src/runtime.js'
import { loadConfig } from '../../src/base/config.js'
import { closeServices, createServices } from '../../src/services/index.js'
import { generateInstructions } from '../../src/guide/instructions.js'
import { HELP_URI } from '../../src/guide/help-resources.js'
import { mentionsAny } from '../../src/services/prune-mentions.js'
import { tools as productTools } from '../../src/tool-list.js'
import { runs } from '../helpers/property.js'
import { commitAll } from '../helpers/git-repo.js'

// Whatever tools an operator chooses, what the server writes names only the served ones: tools/list (descriptions and
// every schema description), the instructions, the usage guide and the help resource.

// A git work tree of its own and an embeddings provider named (never reached), so every tool can be listed.
const ROOT = mkdtempSync(join(tmpdir(), 'wmcp-choice-guide-'))
writeFileSync(join(ROOT, 'README.md'), '# Choice\n')
commitAll(ROOT, 'init')
const PROVIDER = { embeddingsUrl: 'http://127.0.0.1:9/v1', embeddingsModel: 'm' }
const NAMES = productTools.map(tool => tool.name)
const log = pino({ level: 'silent' })

t.test('property: for any chosen subset, the served texts name no tool that is not served', async (t) => {
  const services = await createServices(loadConfig({ root: ROOT, ...PROVIDER }, {}), log)
  t.teardown(() => closeServices(services))

  await fc.assert(fc.asyncProperty(fc.subarray(NAMES, { minLength: 1 }), async (chosen) => {
    const runtime = await createRuntime(loadConfig({ root: ROOT, ...PROVIDER, tools: chosen.join(',') }, {}), log, { services })
    const { registry } = runtime
    const served = registry.catalog.entries().map(e => e.name)
    const unserved = new Set(NAMES.filter(name => !served.includes(name)))
    const help = registry.resources.find(r => r.uri === HELP_URI)
    const texts = {
      'tools/list': registry.catalog.manifestJson(),
      instructions: generateInstructions(registry.catalog.entries()),
      guide: runtime.guide.render(registry.catalog, {}).text,
      help: JSON.stringify(await help?.read({ services: registry.services } as never))
    }
    for (const [what, text] of Object.entries(texts)) {
      if (mentionsAny(text, unserved)) throw new Error(`${what} names a tool not served with --tools ${chosen.join(',')}: ${[...unserved].filter(n => mentionsAny(text, new Set([n]))).join(', ')}`)
    }
    if (!served.every(name => chosen.includes(name))) throw new Error(`served ${served.join(',')} for ${chosen.join(',')}`)
    for (const entry of registry.catalog.entries()) if (entry.description.trim() === '') throw new Error(`${entry.name} lost its description`)
  }), runs(25))
  t.pass('held')
})

t.test('every tool left out in turn: the full guide and tools/list lose only what names it', async (t) => {
  const services = await createServices(loadConfig({ root: ROOT, ...PROVIDER }, {}), log)
  t.teardown(() => closeServices(services))
  const full = await createRuntime(loadConfig({ root: ROOT, ...PROVIDER }, {}), log, { services })

  for (const name of full.registry.catalog.entries().map(e => e.name)) {
    const runtime = await createRuntime(loadConfig({ root: ROOT, ...PROVIDER, excludeTools: name }, {}), log, { services })
    const gone = new Set([name, ...Object.keys(full.registry.unavailable)])

    t.notOk(mentionsAny(runtime.registry.catalog.manifestJson(), gone), `tools/list without ${name}`)
    t.notOk(mentionsAny(runtime.guide.render(runtime.registry.catalog, {}).text, gone), `the guide without ${name}`)
    t.same(runtime.registry.excluded, [name])
  }
  t.same(full.registry.unavailable, {}, 'every product tool was listed to begin with')
})
