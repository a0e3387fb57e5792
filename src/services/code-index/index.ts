// The code index's front door: the symbol and chunk index, semantic search over it, and the index command's building blocks.
// Everything else in this folder is private to it (eslint.config.js and test/layers.test.ts hold that).
export type { CodeIndex, CodeIndexStatus, IndexProblem } from './code-index.js'
export { codeTokens, queryTerms, searchTokens, termForms } from './code-tokens.js'
export type { HybridHit } from './hybrid.js'
export { indexLocation } from './index-file.js'
export { holderText } from './index-lease.js'
export { buildAndPublish } from './index-publisher.js'
export type { PublishOutcome } from './index-publisher.js'
export { loadSqlite } from './index-schema.js'
export type { ChunkRow, NameMatch, PathScope, SymbolRow } from './index-schema.js'
export { indexedLines } from './indexed-lines.js'
export type { SemanticRanking, SemanticSearch, SemanticStatus } from './semantic.js'
export { buildSettingsOf, codeIndexService, semanticService } from './service.js'
