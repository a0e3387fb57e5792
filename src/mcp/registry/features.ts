import { APP_ERR_INVALID_PARAMS, APP_ERR_RESOURCE_NOT_FOUND } from '../../base/errors.js'
import type { ResourceContext, ResourceTemplateDefinition } from '../../tool-api/define-resource.js'
import type { Registry } from './registry.js'

type Params = Record<string, unknown>

const str = (params: Params, key: string): string => {
  const v = params[key]
  if (typeof v !== 'string' || v === '') throw new APP_ERR_INVALID_PARAMS(`'${key}' must be a non-empty string`)
  return v
}

/** A compiled RFC 6570 level-1 template: `test://template/{id}/data` → matcher. */
interface CompiledTemplate {
  definition: ResourceTemplateDefinition
  variables: string[]
  pattern: RegExp
}

function compileTemplate (definition: ResourceTemplateDefinition): CompiledTemplate {
  const variables: string[] = []
  const source = definition.uriTemplate.split(/(\{[^}]+\})/).map(part => {
    const m = /^\{([^}]+)\}$/.exec(part)
    if (m === null) return part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
    variables.push(m[1])
    return '([^/]+)'
  }).join('')
  return { definition, variables, pattern: new RegExp(`^${source}$`) }
}

const omitRead = <T extends object>(item: T): Params => {
  const out: Params = {}
  for (const [k, v] of Object.entries(item)) if (typeof v !== 'function' && k !== 'complete') out[k] = v
  return out
}

/** Handlers for resources/*, prompts/* and completion/complete over one registry. */
export function createFeatureHandlers (registry: Registry) {
  const templates = registry.resourceTemplates.map(compileTemplate)
  const resourcesList = JSON.stringify({ resources: registry.resources.map(omitRead) })
  const templatesList = JSON.stringify({ resourceTemplates: registry.resourceTemplates.map(omitRead) })
  const promptsList = JSON.stringify({ prompts: registry.prompts.map(omitRead) })

  function matchTemplate (uri: string): { template: CompiledTemplate, variables: Record<string, string> } | undefined {
    for (const template of templates) {
      const m = template.pattern.exec(uri)
      if (m === null) continue
      const variables: Record<string, string> = {}
      template.variables.forEach((name, i) => { variables[name] = decodeURIComponent(m[i + 1]) })
      return { template, variables }
    }
    return undefined
  }

  return {
    resourcesList: (): string => resourcesList,
    templatesList: (): string => templatesList,
    promptsList: (): string => promptsList,

    /** Confirms a URI names a resource (subscribe/unsubscribe). */
    assertResource (params: Params): string {
      const uri = str(params, 'uri')
      if (registry.resources.some(r => r.uri === uri) || matchTemplate(uri) !== undefined) return uri
      throw new APP_ERR_RESOURCE_NOT_FOUND(uri)
    },

    async readResource (params: Params, ctx: ResourceContext): Promise<Params> {
      const uri = str(params, 'uri')
      const fixed = registry.resources.find(r => r.uri === uri)
      if (fixed !== undefined) return { contents: await fixed.read(ctx) }
      const match = matchTemplate(uri)
      // spec (SEP-2164): the error names the uri in its data.
      if (match === undefined) throw Object.assign(new APP_ERR_RESOURCE_NOT_FOUND(uri), { rpcData: { uri } })
      return { contents: await match.template.definition.read(uri, match.variables, ctx) }
    },

    async getPrompt (params: Params, ctx: ResourceContext): Promise<Params> {
      const name = str(params, 'name')
      const prompt = registry.prompts.find(p => p.name === name)
      if (prompt === undefined) throw new APP_ERR_INVALID_PARAMS(`unknown prompt '${name}'; prompts/list names every prompt`)
      const raw = params.arguments ?? {}
      if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new APP_ERR_INVALID_PARAMS("'arguments' must be an object of strings")
      const args: Record<string, string> = {}
      for (const [k, v] of Object.entries(raw)) {
        if (typeof v !== 'string') throw new APP_ERR_INVALID_PARAMS(`argument '${k}' must be a string`)
        args[k] = v
      }
      for (const declared of prompt.arguments ?? []) {
        if (declared.required === true && !(declared.name in args)) {
          throw new APP_ERR_INVALID_PARAMS(`prompt '${name}' needs argument '${declared.name}'`)
        }
      }
      return { ...await prompt.get(args, ctx) }
    },

    async complete (params: Params, ctx: ResourceContext): Promise<Params> {
      const ref = params.ref as Params | undefined
      const argument = params.argument as Params | undefined
      if (typeof ref !== 'object' || ref === null || typeof argument !== 'object' || argument === null) {
        throw new APP_ERR_INVALID_PARAMS("'ref' and 'argument' are required")
      }
      const argName = str(argument, 'name')
      const value = typeof argument.value === 'string' ? argument.value : ''
      let completer: ((value: string, ctx: ResourceContext) => string[] | Promise<string[]>) | undefined
      if (ref.type === 'ref/prompt') {
        const prompt = registry.prompts.find(p => p.name === ref.name)
        if (prompt === undefined) throw new APP_ERR_INVALID_PARAMS(`unknown prompt '${String(ref.name)}'`)
        completer = prompt.complete?.[argName]
      } else if (ref.type === 'ref/resource') {
        const template = registry.resourceTemplates.find(t => t.uriTemplate === ref.uri)
        if (template === undefined) throw new APP_ERR_RESOURCE_NOT_FOUND(String(ref.uri))
        completer = template.complete?.[argName]
      } else {
        throw new APP_ERR_INVALID_PARAMS("ref.type must be 'ref/prompt' or 'ref/resource'")
      }
      const all = completer === undefined ? [] : await completer(value, ctx)
      // spec server/utilities/completion: at most 100 values per response
      return { completion: { values: all.slice(0, 100), total: all.length, hasMore: all.length > 100 } }
    }
  }
}

/** The handlers object createFeatureHandlers returns. */
export type FeatureHandlers = ReturnType<typeof createFeatureHandlers>
