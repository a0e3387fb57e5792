/**
 * Resolves once `check()` is true, looking every `everyMs`; rejects naming `what` after `limitMs` — a bound
 * on a state the test waits for, never a guess at how long something takes. The check may be asynchronous
 * (a call that asks a server for its state). The bound is generous: a loaded machine (the suite runs four
 * files at once on two cores, beside other work) takes seconds for what a quiet one does at once.
 */
export async function waitUntil (check: () => boolean | Promise<boolean>, what: string, limitMs = 30_000, everyMs = 10): Promise<void> {
  const until = Date.now() + limitMs
  while (!await check()) {
    if (Date.now() > until) throw new Error(`timed out after ${limitMs} ms waiting for ${what}`)
    // The poll's interval, not a wait for something to happen: the loop ends on the state, or at the bound.
    await new Promise(resolve => setTimeout(resolve, everyMs))
  }
}

/** Resolves once the wall clock reads later than `epochMs` (a staleness check compares with `>`, to the ms). */
export async function clockPasses (epochMs: number): Promise<void> {
  await waitUntil(() => Date.now() > epochMs, `the clock to pass ${epochMs}`, 30_000, 1)
}
