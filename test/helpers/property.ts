import fc, { type Parameters } from 'fast-check'

// Property tests explore new inputs on every run: each test process draws its own seed, and a failure prints
// it (fast-check's message ends `{ seed: …, path: … }`). `FC_SEED=<seed> npm test -- <file>` replays that run.
const seed = process.env.FC_SEED !== undefined && process.env.FC_SEED !== '' ? Number(process.env.FC_SEED) : (Math.random() * 0x7fffffff) | 0
fc.configureGlobal({ ...fc.readConfigureGlobal(), seed })

/** The seed this process's property tests run with. */
export const PROPERTY_SEED = seed

/** fast-check run options: `numRuns`, at this process's seed. */
export function runs (numRuns: number): Parameters<unknown> {
  return { numRuns, seed }
}
