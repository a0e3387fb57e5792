import type { Config } from './base/config.js'
import type { Logger } from './base/logger.js'
import { closeServices, createServices, type Services } from './services/index.js'
import { absentError, excludedError } from './tool-api/next-step.js'
import { excludedTools } from './tool-selection.js'
import { tools as productTools } from './tool-list.js'
import type { AnyTool } from './tool-api/define-tool.js'
import type { ResourceDefinition, ResourceTemplateDefinition } from './tool-api/define-resource.js'
import type { PromptDefinition } from './tool-api/define-prompt.js'
import { createRegistry, type Registry } from './mcp/registry/registry.js'
import { createMcpServer, type McpServer, type NarrowServices } from './mcp/server.js'
import type { TaskStore } from './mcp/tasks/task-store.js'
import { narrowServices } from './services/client-roots.js'
import { createDegradations, type Degradations } from './services/degradations.js'
import { PACKAGE, PACKAGE_ROOT } from './package-info.js'
import { join, resolve } from 'node:path'
import { createUsageGuide, type UsageGuide } from './guide/usage-guide.js'
import { helpResource, helpTemplate } from './guide/help-resources.js'
import { generateInstructions } from './guide/instructions.js'
import { bootLint } from './guide/conventions.js'
import { loadTemplatePrompts } from './guide/prompts.js'
import { readPackageTemplates, readWorkspaceTemplates } from './services/template-files.js'

/** Everything a transport needs: the one engine and what it was built from. */
export interface Runtime {
  config: Config
  log: Logger
  services: Services
  registry: Registry
  /** The usage guide: the injected one, or one built over docs/tools.yaml. */
  guide: UsageGuide
  /** What keeps serving in a reduced way now (the injected register, or one of its own). */
  degradations: Degradations
  server: McpServer
  /**
   * Resolves the docs overlay against the registry, validating every example (and so compiling each
   * tool's argument validator), and logs what is wrong. Idempotent; the bins call it once the first
   * client has been answered, so the work never delays a cold start.
   */
  warmUp: () => void
  /**
   * Winds down for a shutdown that cannot wait any longer: running searches stop and answer with what they found
   * (partial), every call gets `graceMs` to answer, and the rest answer SHUTTING_DOWN. Resolves once all answered.
   */
  windDown: (graceMs: number) => Promise<void>
  /**
   * Ends what the services hold: the code index's scan and thread (its lease released), the vector thread, the
   * token counters and any ripgrep still running. Idempotent; the bins call it before they exit.
   */
  close: () => Promise<void>
}

/** Tools, resources and prompts served beside the product's (a test server's fixtures). */
export interface RuntimeExtras {
  tools?: AnyTool[]
  resources?: ResourceDefinition[]
  resourceTemplates?: ResourceTemplateDefinition[]
  prompts?: PromptDefinition[]
}

/** Optional replacements and additions, for tests and benchmarks. */
export interface RuntimeOverrides {
  services?: Services
  tools?: AnyTool[]
  extras?: RuntimeExtras
  /** false skips the boot-time convention lint (the `check` command reports violations itself); it never covers `tools` or extras. */
  lint?: boolean
  /** false: no call becomes an MCP task (httpOffersTasks says when an HTTP server must not). */
  offerTasks?: boolean
  /** false: serve every tool whatever `--tools`/`--exclude-tools` say (`check` holds every tool's texts as written). */
  chooseTools?: boolean
  /** Where the engine keeps task records (the replicas' shared store, which app.ts assembleHttp connects); this process's memory by default. */
  taskStore?: TaskStore
}

/**
 * Whether an HTTP server offers MCP tasks: a stateless replica without a shared task store would keep a task's
 * record where the client's next request, sent to any replica, may not land.
 */
export function httpOffersTasks (config: Pick<Config, 'mode' | 'redisUrl'>): boolean {
  return config.mode === 'stateful' || config.redisUrl !== ''
}

/** How sessions narrow by their client's roots: over the workspace and its limiter, unless config says to ignore roots. */
function narrowing (config: Config, services: Services, log: Logger): NarrowServices | undefined {
  const { workspace, limiter } = services
  if (config.clientRoots === 'ignore' || workspace === undefined || limiter === undefined) return undefined
  return async (uris) => await narrowServices({ ...services, workspace, limiter }, uris, { log, allowHardLinks: config.allowHardLinks })
}

/** Builds services → registry → engine for a config; both bins and buildApp call this. */
export async function createRuntime (config: Config, log: Logger, overrides: RuntimeOverrides = {}): Promise<Runtime> {
  const baseServices = overrides.services ?? await createServices(config, log)
  const docsFile = config.docsFile === '' ? join(PACKAGE_ROOT, 'docs', 'tools.yaml') : resolve(config.root, config.docsFile)
  const services = {
    ...baseServices,
    guide: baseServices.guide ?? createUsageGuide({ docsFile, root: baseServices.workspace?.root, log }),
    degradations: baseServices.degradations ?? createDegradations(log)
  }
  const user = baseServices.workspace === undefined ? [] : await readWorkspaceTemplates(baseServices.workspace, config.templatesDir, log)
  const prompts = loadTemplatePrompts({ builtin: readPackageTemplates(join(PACKAGE_ROOT, 'docs', 'templates')), user, log })
  const extras = overrides.extras ?? {}
  const extraNames = new Set((extras.tools ?? []).map(tool => tool.name))
  const tools = [...(overrides.tools ?? productTools), ...(extras.tools ?? [])]
  const registry = createRegistry({
    tools,
    excluded: overrides.chooseTools === false ? undefined : excludedTools(tools.map(tool => tool.name), config),
    services,
    resources: [helpResource(), ...(extras.resources ?? [])],
    resourceTemplates: [helpTemplate(), ...(extras.resourceTemplates ?? [])],
    prompts: [...prompts, ...(extras.prompts ?? [])],
    pageSize: config.toolsPageSize,
    explainAbsent: (tool, missing) => absentError(tool, missing, services.absent),
    explainExcluded: excludedError,
    // The conventions hold the product's tools: not a test's stand-ins, nor extras named by someone else (the suite's).
    lint: overrides.lint === false || overrides.tools !== undefined ? undefined : (entries) => bootLint(entries.filter(e => !extraNames.has(e.name)))
  })
  const { catalog } = registry
  const server = createMcpServer({
    registry,
    log,
    info: { name: PACKAGE.name, version: PACKAGE.version, title: 'Workspace MCP' },
    instructions: generateInstructions(catalog.entries()),
    toolTimeoutMs: config.toolTimeoutMs,
    callLogLevel: config.callLogLevel,
    cache: { listTtlMs: config.listCacheTtlMs, readTtlMs: config.readCacheTtlMs },
    narrow: narrowing(config, registry.services, log),
    offerTasks: overrides.offerTasks,
    taskStore: overrides.taskStore
  })
  // Serving has begun: parse the docs now, start the code index's first scan and warm the threads the first calls
  // would wait on (a printing command never calls this). A parser warm-up that fails costs only its speed-up: the
  // first outline starts the thread again.
  const warmUp = (): void => {
    services.guide.docs(catalog)
    registry.services.codeIndex?.start()
    if (config.lazyThreads) return
    const { tokenizer, symbols } = registry.services
    Promise.all([tokenizer?.warm(), symbols?.warm()]).catch((err: unknown) => { log.debug({ err }, 'warming the threads failed') })
  }
  const windDown = async (graceMs: number): Promise<void> => {
    registry.services.search?.windDown()
    await server.stopCalls(graceMs)
  }
  let closing: Promise<void> | undefined
  const close = async (): Promise<void> => {
    closing ??= closeServices(registry.services)
    await closing
  }
  return { config, log, services: registry.services, registry, guide: services.guide, degradations: services.degradations, server, warmUp, windDown, close }
}
