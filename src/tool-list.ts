import type { AnyTool } from './tool-api/define-tool.js'
import { getToolUsageGuide } from './tools/get-tool-usage-guide.js'
import { listDirectory } from './tools/list-directory.js'
import { findFiles } from './tools/find-files.js'
import { searchRegex } from './tools/search-regex.js'
import { searchCode } from './tools/search-code.js'
import { searchSemantic } from './tools/search-semantic.js'
import { findSymbol } from './tools/find-symbol.js'
import { findReferences } from './tools/find-references.js'
import { getCallGraph } from './tools/get-call-graph.js'
import { getRepoMap } from './tools/get-repo-map.js'
import { readFiles } from './tools/read-files.js'
import { getFileInfo } from './tools/get-file-info.js'
import { getSymbols } from './tools/get-symbols.js'
import { getWorkspaceInfo } from './tools/get-workspace-info.js'
import { gitLog } from './tools/git-log.js'
import { gitShow } from './tools/git-show.js'
import { gitDiff } from './tools/git-diff.js'
import { gitBlame } from './tools/git-blame.js'

/** The product's tools, in the order tools/list publishes them. */
export const tools: AnyTool[] = [
  listDirectory,
  getRepoMap,
  findFiles,
  searchRegex,
  searchCode,
  searchSemantic,
  findSymbol,
  findReferences,
  getCallGraph,
  readFiles,
  getFileInfo,
  getSymbols,
  gitLog,
  gitShow,
  gitDiff,
  gitBlame,
  getWorkspaceInfo,
  getToolUsageGuide
]
