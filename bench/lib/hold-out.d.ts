/** The kinds of question, in the order they are reported. */
export const KINDS: readonly ['where', 'how', 'reworded']
export function heldOutIds (questions: ReadonlyArray<{ id: string, kind: string }>, seed: number): Set<string>
