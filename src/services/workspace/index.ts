// The workspace service's front door: the jailed file system every tool reads through.
// Everything else in this folder is private to it (eslint.config.js and test/layers.test.ts hold that).
export { isOutside } from './beneath.js'
export { IMAGE_MIMES, binaryKind, imageFacts, isPdfHead } from './binary-kind.js'
export type { BinaryKind } from './binary-kind.js'
export { charsetTools } from './charset.js'
export { windowBounds } from './file-lines.js'
export type { FileSniff } from './file-lines.js'
export { syncFs } from './fs-ops.js'
export { byteString, displayName, displayText, fsPathOf, parseName } from './path-names.js'
export { createPdfReader } from './pdf-text.js'
export type { PdfReader } from './pdf-text.js'
export { createWorkspaceSet } from './set.js'
export type { WorkspaceService } from './types.js'
export { compileGlobs } from './walk-filter.js'
export { createWorkspace } from './workspace.js'
export type { DirEntry, InspectedPath, PinnedPath, ResolvedPath, WorkspacePart, WorkspaceRoot } from './workspace.js'

export type { IgnoredExample, WalkEntry } from './walk-types.js'
