import type { AnyTool } from './define-tool.js'
import { getToolUsageGuide } from './get-tool-usage-guide.js'

/** The product's tools, in the order tools/list publishes them. */
export const tools: AnyTool[] = [
  getToolUsageGuide
]
