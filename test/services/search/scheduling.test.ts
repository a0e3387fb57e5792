import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import pino from 'pino'
import { createSearch, threadsFor } from '../../../src/services/search/search.js'
import { createLimiter } from '../../../src/services/limiter.js'
import { hostileServices } from '../../helpers/workspace-fixture.js'

// How ripgrep children share the machine: threads split between concurrent searches, which then run below the
// server's event loop (a lone one at its priority), and a call the limiter would refuse is refused before any set-up.

const log = pino({ level: 'silent' })

t.test('threadsFor: a lone search gets every core, concurrent ones share them, never fewer than one', async (t) => {
  t.equal(threadsFor(1, 8), 8)
  t.equal(threadsFor(2, 8), 4)
  t.equal(threadsFor(3, 8), 2)
  t.equal(threadsFor(2, 2), 1)
  t.equal(threadsFor(5, 2), 1)
  t.equal(threadsFor(0, 4), 4, 'a count below one is read as one')
})

/** The niceness field of a /proc stat line (the 19th; the name in parentheses may hold spaces). */
const niceOf = (stat: string): string => stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]

/**
 * A stand-in ripgrep that records its arguments (`<pid>.args`), waits until `go` exists (the test's signal that every
 * search it wanted running is), then records its nice value (`<pid>.nice`) and ends as an empty search.
 */
function spyRg (dir: string): string {
  const rg = path.join(dir, 'rg-spy.sh')
  fs.writeFileSync(rg, `#!/bin/sh\nif [ "$1" = "--version" ]; then echo "ripgrep 15.0.0"; exit 0; fi\necho "$@" > "${dir}/$$.args"\nwhile [ ! -e "${dir}/go" ]; do sleep 0.01; done\ncut -d' ' -f19 /proc/$$/stat > "${dir}/$$.nice"\n`, { mode: 0o755 })
  return rg
}

/** Waits until `n` stand-in runs have recorded their arguments; their pids, in no order. */
async function started (dir: string, n: number): Promise<string[]> {
  const pids = (): string[] => fs.readdirSync(dir).filter(f => f.endsWith('.args')).map(f => f.slice(0, -5))
  while (pids().length < n) await new Promise(resolve => setTimeout(resolve, 5))
  return pids()
}

t.test('a lone ripgrep gets every core at the server\'s own priority (the rg it is measured against runs at it too)', { skip: process.platform === 'linux' ? false : 'reads /proc' }, async (t) => {
  const fx = await hostileServices(t, { big: false })
  const dir = fs.mkdtempSync(path.join(fx.base, 'spy-'))
  const search = await createSearch({ workspace: fx.workspace, log, rgPath: spyRg(dir) })
  t.teardown(() => search.close())

  const pending = search.search({ pattern: 'anything', respectGitignore: false }, { offset: 0, pageSize: 10 })
  const [pid] = await started(dir, 1)
  fs.writeFileSync(path.join(dir, 'go'), '')
  await pending

  const args = fs.readFileSync(path.join(dir, `${pid}.args`), 'utf8').trim().split(' ')
  t.equal(args[0], '--threads')
  t.equal(Number(args[1]), threadsFor(1), 'alone: every core')
  t.equal(fs.readFileSync(path.join(dir, `${pid}.nice`), 'utf8').trim(), niceOf(fs.readFileSync('/proc/self/stat', 'utf8')))
})

t.test('searches side by side share the cores and both run below the server\'s priority, the first reniced when the second starts', { skip: process.platform === 'linux' ? false : 'reads /proc' }, async (t) => {
  const fx = await hostileServices(t, { big: false })
  const dir = fs.mkdtempSync(path.join(fx.base, 'spy-'))
  const search = await createSearch({ workspace: fx.workspace, log, rgPath: spyRg(dir) })
  t.teardown(() => search.close())

  const first = search.search({ pattern: 'one', respectGitignore: false }, { offset: 0, pageSize: 10 })
  await started(dir, 1)
  const second = search.search({ pattern: 'two', respectGitignore: false }, { offset: 0, pageSize: 10 })
  const pids = await started(dir, 2)
  fs.writeFileSync(path.join(dir, 'go'), '')
  await Promise.all([first, second])

  const seen = pids.map(pid => ({
    threads: Number(fs.readFileSync(path.join(dir, `${pid}.args`), 'utf8').split(' ')[1]),
    nice: fs.readFileSync(path.join(dir, `${pid}.nice`), 'utf8').trim()
  }))
  t.same(seen.map(s => s.nice), ['10', '10'], 'both ripgreps yield to the event loop')
  t.same(seen.map(s => s.threads).sort(), [threadsFor(1), threadsFor(2)].sort(), 'the first started alone; the second shares')
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
