import { APP_ERR_RESOURCE_NOT_FOUND } from '../base/errors.js'
import type { Services } from '../services/index.js'
import type { ToolCatalog } from '../services/catalog.js'
import { defineResource, defineResourceTemplate, type ResourceDefinition, type ResourceTemplateDefinition } from '../tool-api/define-resource.js'
import type { UsageGuide } from './usage-guide.js'

/** URI of the whole guide. */
export const HELP_URI = 'workspace://help'
/** URI template of one tool's section. */
export const HELP_TEMPLATE = 'workspace://help/{tool}'

function parts (services: Services): { catalog: ToolCatalog, guide: UsageGuide, now: number } {
  // Both are filled in before the first session opens; read lazily because the registry creates the catalog.
  const { catalog, guide } = services
  if (catalog === undefined || guide === undefined) throw new APP_ERR_RESOURCE_NOT_FOUND(HELP_URI)
  return { catalog, guide, now: services.clock?.now() ?? Date.now() }
}

/** `workspace://help`: the whole usage guide, from the same renderer as get_tool_usage_guide. */
export function helpResource (): ResourceDefinition {
  return defineResource({
    uri: HELP_URI,
    name: 'help',
    title: 'Tool usage guide',
    description: 'Every tool of this server: purpose, parameters, examples, return format and errors (the same text get_tool_usage_guide returns).',
    mimeType: 'text/markdown',
    read ({ services }) {
      const { catalog, guide, now } = parts(services)
      return [{ uri: HELP_URI, mimeType: 'text/markdown', text: guide.render(catalog, {}, now).text }]
    }
  })
}

/** `workspace://help/{tool}`: one tool's section of the guide. */
export function helpTemplate (): ResourceTemplateDefinition {
  return defineResourceTemplate({
    uriTemplate: HELP_TEMPLATE,
    name: 'help_tool',
    title: 'Usage guide for one tool',
    description: 'One tool\'s guide section, e.g. workspace://help/read_files.',
    mimeType: 'text/markdown',
    read (uri, { tool }, { services }) {
      const { catalog, guide, now } = parts(services)
      if (!catalog.entries().some(e => e.name === tool)) throw new APP_ERR_RESOURCE_NOT_FOUND(uri)
      return [{ uri, mimeType: 'text/markdown', text: guide.render(catalog, { tool_names: [tool] }, now).text }]
    },
    complete: {
      tool: (value, { services }) => (services.catalog?.entries() ?? []).map(e => e.name).filter(n => n.startsWith(value))
    }
  })
}
