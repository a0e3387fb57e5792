import type { AnyTool } from './define-tool.js'

/** The product's tools, in the order tools/list publishes them. */
export const tools: AnyTool[] = []
