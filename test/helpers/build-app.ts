import type { Test } from 'tap'
import { assembleHttp, type App } from '../../src/app.js'
import { loadConfig, type Config } from '../../src/base/config.js'
import type { Runtime } from '../../src/runtime.js'
import type { AnyTool } from '../../src/tool-api/define-tool.js'
import { systemClock } from '../../src/services/clock.js'
import type { Services } from '../../src/services/index.js'
import { captureLogger, testTools } from './engine.js'

/** Options for a test app: config overrides (unvalidated, so tests may use tiny timeouts) and tools. */
export interface TestAppOptions {
  config?: Partial<Config>
  tools?: AnyTool[]
  /** Services beside the clock (the test tools need only the clock). */
  services?: Services
}

/** Builds the real app over the test tools (clock service only); closed on teardown. */
export async function buildTestApp (t: Test, options: TestAppOptions = {}): Promise<{ app: App, runtime: Runtime, lines: Array<Record<string, unknown>> }> {
  const { log, lines } = captureLogger()
  const config = Object.freeze({ ...loadConfig({ root: process.cwd() }, {}), ...options.config }) as Config
  const { app, runtime } = await assembleHttp(config, log, { tools: options.tools ?? testTools, services: { clock: systemClock, ...options.services } })
  t.teardown(() => app.close())
  return { app, runtime, lines }
}
