import t from 'tap'
import { inspectRun } from '../../../src/services/search/inspect.js'
import type { RgRun } from '../../../src/services/search/rg.js'

// inspectRun judges how a ripgrep run ended. ripgrep exits 2 both for "some paths could not be read"
// (results stand, with a notice) and for errors of its own (the search cannot be trusted at all).

const run = (over: Partial<RgRun>): RgRun => ({ end: 'exit', code: 0, signal: null, truncated: false, stderr: '', bytes: 0, skipped: { binary: 0, tooLarge: 0 }, ...over })
const opts = { json: true, sawSummary: true, timeoutMs: 30_000 }

t.test('exit 2 with only per-path problems: the results stand and the paths are counted in a notice', async (t) => {
  const notices: string[] = []
  const verdict = inspectRun(run({ code: 2, stderr: 'rg: ./a: Permission denied (os error 13)\nrg: ./b: No such file or directory (os error 2)\n' }), 'x', notices, opts)
  t.same(verdict, { partial: false, failed: undefined, unreadable: 2 })
  t.match(notices, [/^2 path\(s\) could not be searched \(skipped\): \.\/a: Permission denied/])
})

t.test('exit 2 with an error of ripgrep\'s own: SEARCH_FAILED quoting it, never a silent "no matches"', async (t) => {
  for (const stderr of ['rg: something unexpected happened\n', 'rg: ./a: Permission denied (os error 13)\nrg: unknown encoding\n']) {
    t.throws(() => inspectRun(run({ code: 2, stderr }), 'x', [], opts), { toolCode: 'SEARCH_FAILED', message: /^ERROR SEARCH_FAILED: ripgrep failed: .*(unexpected|unknown encoding).* Hint: check include\/exclude and path/ }, stderr)
  }
})

t.test('exit 2 with nothing on stderr: nothing to count, nothing to say', async (t) => {
  const notices: string[] = []
  t.same(inspectRun(run({ code: 2 }), 'x', notices, opts), { partial: false, failed: undefined, unreadable: 0 })
  t.same(notices, [])
})

t.test('a cancelled run throws the signal\'s reason, or CANCELLED when there is none', async (t) => {
  const controller = new AbortController()
  controller.abort(new Error('client went away'))
  t.throws(() => inspectRun(run({ end: 'aborted' }), 'x', [], { ...opts, signal: controller.signal }), { message: 'client went away' })
  t.throws(() => inspectRun(run({ end: 'aborted' }), 'x', [], opts), { toolCode: 'CANCELLED', message: /^ERROR CANCELLED: / })
})
