/** Orders strings by UTF-16 code units: the same order on every machine and locale (never localeCompare). */
export function compareText (a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}
