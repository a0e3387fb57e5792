import type { ToolDefinition } from './define-tool.js'

/** The product's tools, in the order tools/list publishes them. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export const tools: Array<ToolDefinition<any>> = []
