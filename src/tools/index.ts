import type { AnyTool } from '../tool-api/define-tool.js'
import { getToolUsageGuide } from './get-tool-usage-guide.js'
import { listDirectory } from './list-directory.js'
import { findFiles } from './find-files.js'
import { searchRegex } from './search-regex.js'
import { searchCode } from './search-code.js'
import { searchSemantic } from './search-semantic.js'
import { findSymbol } from './find-symbol.js'
import { findReferences } from './find-references.js'
import { getCallGraph } from './get-call-graph.js'
import { getRepoMap } from './get-repo-map.js'
import { readFiles } from './read-files.js'
import { getFileInfo } from './get-file-info.js'
import { getSymbols } from './get-symbols.js'
import { getWorkspaceInfo } from './get-workspace-info.js'
import { gitLog } from './git-log.js'
import { gitShow } from './git-show.js'
import { gitDiff } from './git-diff.js'
import { gitBlame } from './git-blame.js'

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
