import t, { type Test } from 'tap'
import { Worker } from 'node:worker_threads'
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import pino from 'pino'
import { syncFs } from '../../src/services/workspace/fs-ops.js'
import { createWorkspace, type WorkspaceService } from '../../src/services/workspace/workspace.js'
import type { WalkOptions, WalkResult } from '../../src/services/workspace/walk-types.js'

// Whole-tree walks (find_files, list_directory depth > 1) while someone with write access to the workspace swaps
// folders under them: a folder, or a folder above it, for a link to an outside tree laid out like the inside one,
// for a link loop, a file or a FIFO. Nothing outside the root may be listed, and a walk must never hang. Then the
// same swaps made at a chosen moment (between a folder's listing and its child's open): the answer must not
// depend on whether the outside path exists.

const log = pino({ level: 'silent' })
const linux = process.platform === 'linux' ? false : 'descriptor-relative walks need /proc'
/** Walks per swap mode, and the time each mode may take at most: whichever comes first. */
const ROUNDS = 400
const MODE_MS = 8000

interface Tree { base: string, root: string, outside: string, canary: string }

/** root/a/sub and root/b hold inside names; outside/ holds the same layout with canary names, so a swap "works". */
function makeTree (t: Test): Tree {
  const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'wmcp-walk-race-')))
  t.teardown(() => fs.rmSync(base, { recursive: true, force: true }))
  const root = path.join(base, 'root')
  const outside = path.join(base, 'outside')
  const canary = `CANARY-walk-${process.pid}`
  for (const dir of ['a/sub/deeper', 'b']) fs.mkdirSync(path.join(root, dir), { recursive: true })
  fs.writeFileSync(path.join(root, 'a/sub/inside.txt'), 'in\n')
  fs.writeFileSync(path.join(root, 'a/sub/deeper/inside-deep.txt'), 'in\n')
  fs.writeFileSync(path.join(root, 'b/other.txt'), 'in\n')
  // Names are data: a newline and bytes that are not UTF-8, inside the folder that is swapped.
  fs.writeFileSync(path.join(root, 'a/sub/new\nline.txt'), 'in\n')
  fs.writeFileSync(Buffer.concat([Buffer.from(path.join(root, 'a/sub/')), Buffer.from([0x6c, 0xe9, 0xff, 0x2e, 0x74, 0x78, 0x74])]), 'in\n')
  for (const dir of ['sub/deeper', 'deeper', `${canary}-dir`]) fs.mkdirSync(path.join(outside, dir), { recursive: true })
  for (const file of [`${canary}.txt`, `sub/${canary}.txt`, `sub/deeper/${canary}.txt`, `deeper/${canary}.txt`, `${canary}-dir/${canary}.txt`]) fs.writeFileSync(path.join(outside, file), 'secret\n')
  return { base, root, outside, canary }
}

/** A thread swapping `target` for something else and back, as fast as it can, until ended (or 60 s). */
async function swapper (t: Test, target: string, mode: string, outside: string): Promise<void> {
  const worker = new Worker(`
    const fs = require('node:fs')
    const { execFileSync } = require('node:child_process')
    const { workerData: { target, mode, outside }, parentPort } = require('node:worker_threads')
    const aside = target + '.aside'
    const stop = Date.now() + 60000
    const fifo = target + '.fifo'
    if (mode === 'fifo') execFileSync('mkfifo', [fifo])
    parentPort.postMessage('swapping')
    while (Date.now() < stop) {
      try {
        fs.renameSync(target, aside)
        if (mode === 'link') fs.symlinkSync(outside, target)
        else if (mode === 'loop') fs.symlinkSync(target, target)
        else if (mode === 'file') fs.writeFileSync(target, 'a file now\\n')
        else if (mode === 'fifo') fs.renameSync(fifo, target)
        if (mode === 'fifo') fs.renameSync(target, fifo)
        else fs.unlinkSync(target)
        fs.renameSync(aside, target)
      } catch {}
    }
  `, { eval: true, workerData: { target, mode, outside } })
  t.teardown(async () => { await worker.terminate() })
  await new Promise(resolve => worker.once('message', resolve))
}

const findAll = (start: WalkOptions['start']): WalkOptions => ({
  start,
  maxDepth: Number.POSITIVE_INFINITY,
  includeHidden: true,
  respectGitignore: true,
  maxEntries: 10_000,
  statDirs: false,
  match: { patterns: ['**/*'], exclude: [], base: '', overRoots: false }
})
const listDeep = (start: WalkOptions['start']): WalkOptions => ({
  start, maxDepth: 5, includeHidden: true, respectGitignore: true, maxEntries: 10_000, showIgnoredDirs: true, countAtLimit: true, resolveLinks: true, sort: 'name'
})

/** Every name and note a walk answered, to look for the canary in. */
const said = (result: WalkResult): string[] => [...result.entries.flatMap(e => [e.relative, e.name, e.link?.state === 'inside' ? e.link.relative : '']), ...result.notes]

for (const [mode, swapped] of [['link', 'a/sub'], ['link', 'a'], ['loop', 'a/sub'], ['file', 'a/sub'], ['fifo', 'a/sub']] as const) {
  t.test(`walks while ${swapped} is swapped for a ${mode === 'link' ? 'link to an outside tree' : mode === 'loop' ? 'link to itself' : mode}: nothing outside is listed, no walk hangs`, { skip: linux }, async (t) => {
    const tree = makeTree(t)
    const ws = await createWorkspace({ root: tree.root, log })
    const start = await ws.resolve('.')
    const clean = await ws.walk(findAll(start))
    t.ok(clean.entries.some(e => e.relative === 'a/sub/new\\x0aline.txt'), 'a newline in a name is shown escaped')
    t.ok(clean.entries.some(e => e.relative === 'a/sub/l\\xe9\\xff.txt'), 'bytes that are not UTF-8 are shown escaped')
    await swapper(t, path.join(tree.root, swapped), mode, mode === 'link' && swapped === 'a' ? tree.outside : path.join(tree.outside, 'sub'))
    const began = Date.now()
    let rounds = 0
    let raced = 0
    let escapes = 0
    while (rounds < ROUNDS && Date.now() - began < MODE_MS) {
      const result = await ws.walk(rounds % 2 === 0 ? findAll(start) : listDeep(start))
      rounds++
      const leaked = said(result).filter(text => text.includes(tree.canary))
      if (leaked.length > 0) {
        escapes++
        t.fail(`round ${rounds}: listed the outside: ${leaked.join(', ')}`)
      }
      if (result.entries.some(e => e.relative.includes('\n'))) t.fail(`round ${rounds}: a raw newline in a path`)
      const names = new Set(result.entries.map(e => e.relative))
      if (result.notes.length > 0 || !names.has('a/sub/inside.txt') || names.has(`${swapped}.aside`)) raced++
    }
    t.comment(`${mode} ${swapped}: ${rounds} walks in ${Date.now() - began} ms, ${raced} met the swap, ${escapes} escapes`)
    t.equal(escapes, 0, 'no walk listed the outside')
    t.ok(rounds > 0, 'walks ran while the swapper did')
  })
}

/**
 * The walk in this thread (descriptor-relative, as a walk thread runs it), with `swap` run once, synchronously,
 * when the walk asks whether to keep `at` — after its parent folder was listed, before `at` is opened.
 */
async function walkSwapping (root: string, at: string, swap: () => void): Promise<WalkResult> {
  const ws: WorkspaceService = await createWorkspace({ root, log, listing: syncFs, walkHere: true })
  let done = false
  return await ws.walk({
    start: await ws.resolve('.'),
    maxDepth: 10,
    includeHidden: true,
    respectGitignore: false,
    maxEntries: 1000,
    keepDir: (relative) => {
      if (relative === at && !done) { done = true; swap() }
      return true
    }
  })
}

t.test('a folder, or the folder above it, swapped between a listing and the open: the same answer whether the outside path exists or not', { skip: linux }, async (t) => {
  const answers: Record<string, string[]> = {}
  for (const outsideThere of [true, false]) {
    for (const [what, at, swapped] of [['the folder', 'a/sub', 'a/sub'], ['the folder above it', 'a/sub', 'a'], ['a folder at the top', 'a', 'a']] as const) {
      const tree = makeTree(t)
      if (!outsideThere) fs.rmSync(tree.outside, { recursive: true })
      const target = path.join(tree.root, swapped)
      const result = await walkSwapping(tree.root, at, () => {
        fs.renameSync(target, `${target}.aside`)
        fs.symlinkSync(swapped === 'a' ? tree.outside : path.join(tree.outside, 'sub'), target)
      })
      t.notOk(said(result).some(text => text.includes(tree.canary)), `${what}: nothing outside listed`)
      const key = `${what}`
      const answer = [...result.entries.map(e => `${e.relative} ${e.kind}`), ...result.notes]
      if (answers[key] === undefined) answers[key] = answer
      else t.strictSame(answer, answers[key], `${what}: the answer does not tell whether the outside exists`)
    }
  }
  // The open is relative to the folder the walk holds, so a swapped folder above is never followed: its real
  // contents (now under a.aside) are listed under the name the walk saw.
  t.ok(answers['the folder above it'].includes('a/sub/inside.txt file'), 'a swap above a held folder changes nothing below it')
  t.ok(answers['the folder'].includes('a/sub/: replaced by a link out of the workspace while listing; not followed; its entries are not listed'), 'a swapped folder is noted')
  t.notOk(answers['the folder'].some(line => /^a\/sub\/[^:]/.test(line)), 'and nothing below it is listed')
})

t.test('a folder replaced by a file, a FIFO or a link loop between its listing and its open is noted, never opened as one', { skip: linux }, async (t) => {
  for (const [what, make] of [
    ['a file', (p: string) => fs.writeFileSync(p, 'now a file\n')],
    ['a FIFO', (p: string) => execFileSync('mkfifo', [p])],
    ['a link to itself', (p: string) => fs.symlinkSync(p, p)]
  ] as const) {
    const tree = makeTree(t)
    const target = path.join(tree.root, 'a/sub')
    const result = await walkSwapping(tree.root, 'a/sub', () => { fs.renameSync(target, `${target}.aside`); make(target) })
    t.match(result.notes, [what === 'a link to itself' ? /^a\/sub\/: replaced by a link out of the workspace/ : /^a\/sub\/: not readable \(ENOTDIR\)/], what)
    t.match(result.entries.find(e => e.relative === 'a/sub'), { kind: 'dir', unreadable: /./ }, `${what}: the folder is shown as the listing saw it, marked unreadable`)
  }
})
