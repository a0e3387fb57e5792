import type { Config } from './config.js'
import type { Logger } from './logger.js'
import { createServices, type Services } from './services/index.js'
import { tools as productTools } from './tools/index.js'
import type { AnyTool } from './tools/define-tool.js'
import { conformanceFixtures } from './fixtures/conformance.js'
import { createRegistry, type Registry } from './mcp/registry.js'
import { createMcpServer, type McpServer } from './mcp/server.js'
import { PACKAGE } from './package-info.js'

/** Everything a transport needs: the one engine and what it was built from. */
export interface Runtime {
  config: Config
  log: Logger
  services: Services
  registry: Registry
  server: McpServer
}

/** Optional replacements, for tests and benchmarks. */
export interface RuntimeOverrides {
  services?: Services
  tools?: AnyTool[]
}

/** Builds services → registry → engine for a config; both bins and buildApp call this. */
export async function createRuntime (config: Config, log: Logger, overrides: RuntimeOverrides = {}): Promise<Runtime> {
  const services = overrides.services ?? await createServices(config, log)
  const fixtures = config.fixtures === 'conformance' ? conformanceFixtures() : undefined
  const registry = createRegistry({
    tools: [...(overrides.tools ?? productTools), ...(fixtures?.tools ?? [])],
    services,
    resources: [...(fixtures?.resources ?? [])],
    resourceTemplates: [...(fixtures?.resourceTemplates ?? [])],
    prompts: [...(fixtures?.prompts ?? [])],
    pageSize: config.toolsPageSize
  })
  const server = createMcpServer({
    registry,
    log,
    info: { name: PACKAGE.name, version: PACKAGE.version, title: 'Workspace MCP' },
    instructions: 'Read-only access to one workspace: navigate, search and read files.',
    toolTimeoutMs: config.toolTimeoutMs,
    callLogLevel: config.callLogLevel
  })
  return { config, log, services: registry.services, registry, server }
}
