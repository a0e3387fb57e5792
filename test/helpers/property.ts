import type { Parameters } from 'fast-check'

/** The seed property tests run with: fixed, so a CI run is repeatable; `FC_SEED=random` explores new inputs. */
const seed = process.env.FC_SEED === 'random' ? undefined : Number(process.env.FC_SEED ?? 20261124)

/** fast-check run options: `numRuns` at the shared seed (a failure prints the seed and path to replay it). */
export function runs (numRuns: number): Parameters<unknown> {
  return seed === undefined || Number.isNaN(seed) ? { numRuns } : { numRuns, seed }
}
