// The search service's front door: ripgrep over the workspace, paged and budgeted.
// Everything else in this folder is private to it (eslint.config.js and test/layers.test.ts hold that).
export { createSearch } from './search.js'
export type { ContentItem, FileItem, HiddenMatches, SearchLine, SearchPage, SearchService } from './search.js'
