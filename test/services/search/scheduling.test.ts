import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import pino from 'pino'
import { createSearch, threadsFor } from '../../../src/services/search/search.js'
import { createLimiter } from '../../../src/services/limiter.js'
import { hostileServices } from '../../helpers/workspace-fixture.js'

// How ripgrep children share the machine: threads split between concurrent searches, a lower priority
// than the server's event loop, and a call the limiter would refuse is refused before any set-up.

const log = pino({ level: 'silent' })
const SUMMARY = '{"data":{"elapsed_total":{"secs":0,"nanos":1},"stats":{}},"type":"summary"}'

t.test('threadsFor: a lone search gets every core, concurrent ones share them, never fewer than one', async (t) => {
  t.equal(threadsFor(1, 8), 8)
  t.equal(threadsFor(2, 8), 4)
  t.equal(threadsFor(3, 8), 2)
  t.equal(threadsFor(2, 2), 1)
  t.equal(threadsFor(5, 2), 1)
  t.equal(threadsFor(0, 4), 4, 'a count below one is read as one')
})

t.test('ripgrep gets --threads for its share and runs below the server\'s priority', { skip: process.platform === 'linux' ? false : 'reads /proc' }, async (t) => {
  const fx = await hostileServices(t, { big: false })
  const out = path.join(fx.base, 'seen')
  // A stand-in ripgrep that records its arguments and, after the parent had time to renice it, its nice value.
  const rg = path.join(fx.base, 'rg-spy.sh')
  fs.writeFileSync(rg, `#!/bin/sh\nif [ "$1" = "--version" ]; then echo "ripgrep 15.0.0"; exit 0; fi\necho "$@" > "${out}.args"\nsleep 0.3\ncut -d' ' -f19 /proc/$$/stat > "${out}.nice"\nprintf '%s\\n' '${SUMMARY}'\n`, { mode: 0o755 })
  const search = await createSearch({ workspace: fx.workspace, log, rgPath: rg })
  t.teardown(() => search.close())

  await search.search({ pattern: 'anything' }, { offset: 0, pageSize: 10 })

  const args = fs.readFileSync(`${out}.args`, 'utf8').trim().split(' ')
  t.equal(args[0], '--threads')
  t.equal(Number(args[1]), threadsFor(1), 'alone: every core')
  t.equal(fs.readFileSync(`${out}.nice`, 'utf8').trim(), '10')
})

t.test('a search the limiter would refuse is BUSY before its target is pinned (no descriptor, no ignore-file reads)', async (t) => {
  const fx = await hostileServices(t, { big: false })
  const limiter = createLimiter({ search: { concurrency: 1, queue: 0 } })
  let pins = 0
  const workspace = { ...fx.workspace, pin: async (...args: Parameters<typeof fx.workspace.pin>) => { pins++; return await fx.workspace.pin(...args) } }
  const search = await createSearch({ workspace, log, limiter })
  t.teardown(() => search.close())
  let release: () => void = () => {}
  const held = limiter.run('search', undefined, () => new Promise<void>(resolve => { release = resolve }))

  const err = await search.search({ pattern: 'x' }, { offset: 0, pageSize: 10 }).catch((e: { toolCode?: string }) => e)

  t.match(err, { toolCode: 'BUSY' })
  t.equal(pins, 0)
  release()
  await held
})
