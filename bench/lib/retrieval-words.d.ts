export function questionForms (question: string): Set<string>
export function answerForms (answer: { path: string, symbol: string }): Set<string>
export function sharesNoWord (question: string, answers: ReadonlyArray<{ path: string, symbol: string }>): boolean
