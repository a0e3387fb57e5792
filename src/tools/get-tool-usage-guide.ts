import { Type } from '@sinclair/typebox'
import { defineTool, Inject, TOOL_CATEGORIES, textResult } from '../tool-api/define-tool.js'

/** structuredContent of get_tool_usage_guide. */
export const GetToolUsageGuideOutput = Type.Object({
  warnings: Type.Array(Type.String(), { description: 'One line per unknown tool name, listing the available names' }),
  metadata: Type.Object({
    total_tools: Type.Integer({ description: 'Tools the server lists' }),
    filtered_count: Type.Integer({ description: 'Tools in this guide after the filter' }),
    invalid_names: Type.Array(Type.String(), { description: 'Requested names that are not tools' }),
    generation_time_ms: Type.Number({ description: 'Time spent rendering, in milliseconds' })
  }, { description: 'Counts and timing of this rendering' })
})

/** The usage guide, rendered from the live registry plus docs/tools.yaml. */
export const getToolUsageGuide = defineTool({
  name: 'get_tool_usage_guide',
  title: 'Tool Usage Guide',
  category: 'guide',
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  description: 'Get a Markdown guide to these tools — parameters with limits, examples, return format, errors — from the live registry; pass several names in `tool_names` to document only those.\n\n' +
    'Use it when a one-line description is not enough; get_workspace_info describes the workspace and list_directory shows its files. Unknown names are warnings, not errors.',
  input: Type.Object({
    tool_names: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 64 }), {
      maxItems: 50,
      description: 'Only document these tools, e.g. ["read_files", "search_regex"]; omit for every tool'
    })),
    category: Type.Optional(Type.Union(TOOL_CATEGORIES.map(c => Type.Literal(c)), {
      description: 'Only document one category, e.g. "search"'
    })),
    include_examples: Type.Optional(Type.Boolean({
      default: true,
      description: 'Include worked example calls, e.g. false for a shorter guide'
    })),
    catalog: Inject('catalog'),
    guide: Inject('guide'),
    clock: Inject('clock')
  }),
  output: GetToolUsageGuideOutput,
  run ({ tool_names: toolNames, category, include_examples: includeExamples, catalog, guide, clock }) {
    const out = guide.render(catalog, { tool_names: toolNames, category, include_examples: includeExamples }, clock.now())
    return textResult(out.text, { warnings: out.warnings, metadata: out.metadata })
  }
})
