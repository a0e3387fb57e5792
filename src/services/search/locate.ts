import { execFile } from 'node:child_process'
import { constants as fsConstants } from 'node:fs'
import { access } from 'node:fs/promises'
import { findExecutable } from '../executables.js'
import { promisify } from 'node:util'

const execFileAsync = promisify(execFile)

async function executable (file: string): Promise<boolean> {
  return access(file, fsConstants.X_OK).then(() => true, () => false)
}

/**
 * Finds the binary without running it (a spawn at boot would add to stdio cold start): the one configured, else
 * @vscode/ripgrep's, else `rg` on PATH where the workspace cannot have planted one (findExecutable).
 */
export async function locateRg (explicit: string | undefined, roots: readonly string[]): Promise<{ rgPath: string, source: string }> {
  if (explicit !== undefined) {
    if (await executable(explicit)) return { rgPath: explicit, source: 'option' }
    throw new Error(`--ripgrep-path ${explicit} is not an executable file`)
  }
  try {
    const mod = await import('@vscode/ripgrep') as { rgPath: string }
    if (await executable(mod.rgPath)) return { rgPath: mod.rgPath, source: '@vscode/ripgrep' }
  } catch {}
  const found = await findExecutable('rg', roots)
  if (found !== undefined) return { rgPath: found, source: 'PATH' }
  throw new Error('ripgrep not found: install @vscode/ripgrep or put rg on PATH (an absolute entry outside the served roots)')
}

/** Asks the binary for its version and features (once, on first use). */
export async function probeRg (rgPath: string): Promise<{ version: string, pcre2Available: boolean }> {
  try {
    const { stdout } = await execFileAsync(rgPath, ['--version'], { timeout: 10_000 })
    return { version: /ripgrep (\S+)/.exec(stdout)?.[1] ?? 'unknown', pcre2Available: /\+pcre2|PCRE2 [\d.]+ is available/.test(stdout) }
  } catch {
    return { version: 'unknown', pcre2Available: false }
  }
}
