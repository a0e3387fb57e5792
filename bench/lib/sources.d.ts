/** Content hashes of src/: the whole and each part (a folder of src/, of src/services/). */
export interface SourcesHash { whole: string, byPart: Record<string, string> }
/** The sources' hash under `root` as a whole and by part. */
export function sourcesHash (root: string): SourcesHash
/** The results document's `- Sources:` line for a hash. */
export function sourcesLine (hash: SourcesHash): string
/** The hashes a results document records; undefined when it has none. */
export function recordedSources (document: string): SourcesHash | undefined
/** The parts whose sources differ between two hashes. */
export function staleParts (recorded: SourcesHash, current: SourcesHash): string[]
