import type { AnyTool } from './define-tool.js'
import { getToolUsageGuide } from './get-tool-usage-guide.js'
import { searchRegex } from './search-regex.js'
import { getWorkspaceInfo } from './get-workspace-info.js'

/** The product's tools, in the order tools/list publishes them. */
export const tools: AnyTool[] = [
  searchRegex,
  getWorkspaceInfo,
  getToolUsageGuide
]
