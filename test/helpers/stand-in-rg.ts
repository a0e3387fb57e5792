import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { waitUntil } from './wait.js'

// Stand-in ripgrep executables for the search tests: exact output, or real ripgrep with one kind of run failing.

/** One `rg --json` match event for `file` (a path as ripgrep prints it, `./…`). */
export const matchEvent = (file: string): string => JSON.stringify({ type: 'match', data: { path: { text: file }, lines: { text: 'hit\n' }, line_number: 1, submatches: [] } })

/** A stand-in ripgrep at `dir/name`: answers --version, else runs the shell `body`. */
export function scriptRg (dir: string, name: string, body: string): string {
  const file = path.join(dir, name)
  fs.writeFileSync(file, `#!/bin/sh\nif [ "$1" = "--version" ]; then echo "ripgrep 15.0.0"; exit 0; fi\n${body}\n`, { mode: 0o755 })
  return file
}

/**
 * A ripgrep that reports one match for `file`, then runs on (as on a huge tree) until it is stopped; `reported()`
 * resolves once the match is written, so a test stops it mid-search without guessing how long it takes to start.
 */
export function reportingRg (file = './hello.txt'): { path: string, reported: () => Promise<void> } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wmcp-slow-rg-'))
  const marker = path.join(dir, 'reported')
  return {
    path: scriptRg(dir, 'rg', `printf '%s\\n' '${matchEvent(file)}'\n: > '${marker}'\nexec sleep 60`),
    reported: async () => { await waitUntil(() => fs.existsSync(marker), 'ripgrep to report its match') }
  }
}
