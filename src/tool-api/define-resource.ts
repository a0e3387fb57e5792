import type { Services } from '../services/index.js'

/** One item of a resources/read result (spec TextResourceContents | BlobResourceContents). */
export type ResourceContents =
  | { uri: string, mimeType?: string, text: string }
  | { uri: string, mimeType?: string, blob: string }

/** Context handed to resource readers. */
export interface ResourceContext {
  services: Services
  signal: AbortSignal
}

/** A fixed resource at one URI. */
export interface ResourceDefinition {
  uri: string
  name: string
  title?: string
  description?: string
  mimeType?: string
  read(ctx: ResourceContext): Promise<ResourceContents[]> | ResourceContents[]
}

/** A family of resources addressed by an RFC 6570 level-1 template (`workspace://help/{tool}`). */
export interface ResourceTemplateDefinition {
  uriTemplate: string
  name: string
  title?: string
  description?: string
  mimeType?: string
  read(uri: string, variables: Record<string, string>, ctx: ResourceContext): Promise<ResourceContents[]> | ResourceContents[]
  /** Completion values for a template variable (completion/complete). */
  complete?: Record<string, (value: string, ctx: ResourceContext) => string[] | Promise<string[]>>
}

/** Defines a fixed resource. */
export function defineResource (definition: ResourceDefinition): ResourceDefinition {
  return definition
}

/** Defines a resource template. */
export function defineResourceTemplate (definition: ResourceTemplateDefinition): ResourceTemplateDefinition {
  return definition
}
