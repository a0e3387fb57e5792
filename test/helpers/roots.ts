import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import pino from 'pino'
import type { Test } from 'tap'
import { loadConfig, type Config } from '../../src/base/config.js'
import { createServices, type ProductionServices } from '../../src/services/index.js'
import { commitAll } from './git-repo.js'

/** Stored only beside the roots: it must never reach an answer. */
export const CANARY = 'CANARY-outside-every-root'

/** Three served roots and their services. */
export interface Roots {
  base: string
  app: string
  docs: string
  plain: string
  services: ProductionServices & Required<Pick<ProductionServices, 'search' | 'git'>>
  /** The loaded configuration that serves them (app first, docs named, plain by its folder). */
  config: Config
}

function write (file: string, text: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true })
  fs.writeFileSync(file, text)
}

/** app (a repository), docs (a repository) and plain (a folder), plus a secret beside them. */
export async function threeRoots (t: Test): Promise<Roots> {
  const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'wmcp-roots-')))
  t.teardown(() => fs.rmSync(base, { recursive: true, force: true }))
  const [app, docs, plain] = ['app', 'docs', 'plain'].map(name => path.join(base, name))
  write(path.join(base, 'outside', 'secret.txt'), `${CANARY}\n`)
  write(path.join(app, 'src', 'upload.ts'), 'export function retryFailedUpload () { return "needle" }\n')
  write(path.join(app, '.gitignore'), 'build/\n')
  write(path.join(app, 'build', 'out.js'), 'needle in a build\n')
  write(path.join(app, 'a:b.txt'), 'a first-root file whose name holds a colon\n')
  write(path.join(app, 'README.md'), '# App\n')
  commitAll(app, 'Start the app')
  write(path.join(docs, 'guide', 'intro.md'), '# Intro\n\nThe needle of the guide.\n')
  write(path.join(docs, 'README.md'), '# Docs\n')
  commitAll(docs, 'Start the docs')
  fs.symlinkSync(path.join(app, 'README.md'), path.join(docs, 'to-app'))
  fs.symlinkSync('../outside/secret.txt', path.join(docs, 'to-secret'))
  write(path.join(plain, 'notes.txt'), 'plain needle\n')
  const config = loadConfig({ root: app, roots: [`docs=${docs}`, plain] }, {})
  const { search, git, ...services } = await createServices(config, pino({ level: 'silent' }))
  if (search === undefined || git === undefined) throw new Error('ripgrep and git are needed here')
  return { base, app, docs, plain, config, services: { ...services, search, git } }
}
