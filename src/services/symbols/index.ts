// The symbols service's front door: tree-sitter outlines and the languages they cover.
// Everything else in this folder is private to it (eslint.config.js and test/layers.test.ts hold that).
export { MAX_SOURCE_BYTES, SYMBOL_KINDS, supportedLanguages, symbolLanguageOf } from './languages.js'
export type { SymbolKind, SymbolLanguage } from './languages.js'
export { buildOutline } from './outline.js'
export type { OutlineSymbol } from './outline.js'
export { createSymbolParser, locateTreeSitter, parseRequest, parserThread, symbolParser } from './parser.js'
export type { BackgroundPriority, ParsedDefinitions, ParseRequest, ParserModule, ParserThreadData, RawDefinition, SymbolParser, TreeSitterLocation } from './parser.js'
export { parserHandler } from './parse-handler.js'
export { kindStart, MAX_COLUMN, nameOfToken, nameToken, REFERENCE_KINDS, referenceSites, siteWords, sitesBlob, unpackSite } from './references.js'
export type { FileReferences, ReferenceKind, ReferenceSite } from './references.js'
