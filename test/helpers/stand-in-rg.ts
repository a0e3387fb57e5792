import fs from 'node:fs'
import path from 'node:path'

// Stand-in ripgrep executables for the search tests: exact output, or real ripgrep with one kind of run failing.

/** One `rg --json` match event for `file` (a path as ripgrep prints it, `./…`). */
export const matchEvent = (file: string): string => JSON.stringify({ type: 'match', data: { path: { text: file }, lines: { text: 'hit\n' }, line_number: 1, submatches: [] } })

/** A stand-in ripgrep at `dir/name`: answers --version, else runs the shell `body`. */
export function scriptRg (dir: string, name: string, body: string): string {
  const file = path.join(dir, name)
  fs.writeFileSync(file, `#!/bin/sh\nif [ "$1" = "--version" ]; then echo "ripgrep 15.0.0"; exit 0; fi\n${body}\n`, { mode: 0o755 })
  return file
}
