/**
 * Resolves once `check()` is true, looking every `everyMs`; rejects naming `what` after `limitMs` — a bound
 * on a state the test waits for, never a guess at how long something takes.
 */
export async function waitUntil (check: () => boolean, what: string, limitMs = 10_000, everyMs = 10): Promise<void> {
  const until = Date.now() + limitMs
  while (!check()) {
    if (Date.now() > until) throw new Error(`timed out after ${limitMs} ms waiting for ${what}`)
    await new Promise(resolve => setTimeout(resolve, everyMs))
  }
}
