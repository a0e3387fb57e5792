import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { waitUntil } from './wait.js'

// Stand-in ripgrep executables for the search tests: exact output, or real ripgrep with one kind of run failing.

/** One `rg --json` match event for `file` (a path as ripgrep prints it, `./…`). */
export const matchEvent = (file: string): string => JSON.stringify({ type: 'match', data: { path: { text: file }, lines: { text: 'hit\n' }, line_number: 1, submatches: [] } })

/** The `rg --json` begin and end events around a file's lines (a page's read keeps the lines of a begun file only). */
export const beginEvent = (file: string): string => JSON.stringify({ type: 'begin', data: { path: { text: file } } })
export const endEvent = (file: string, lines = 1): string => JSON.stringify({ type: 'end', data: { path: { text: file }, binary_offset: null, stats: { matched_lines: lines, matches: lines } } })

/** The shell that prints one `rg --count --null --with-filename` record: `file` (as ripgrep prints it) and its count. */
export const countRecord = (file: string, count: number): string => `printf '%s\\000%d\\n' '${file}' ${count}`

/** A stand-in ripgrep at `dir/name`: answers --version, else runs the shell `body`. */
export function scriptRg (dir: string, name: string, body: string): string {
  const file = path.join(dir, name)
  fs.writeFileSync(file, `#!/bin/sh\nif [ "$1" = "--version" ]; then echo "ripgrep 15.0.0"; exit 0; fi\n${body}\n`, { mode: 0o755 })
  return file
}

/**
 * A ripgrep whose counting pass reports one match in `file`, then runs on (as on a huge tree) until it is stopped;
 * `reported()` resolves once the count is written, so a test stops it mid-search without guessing how long it takes to start.
 */
export function reportingRg (file = './hello.txt'): { path: string, reported: () => Promise<void> } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wmcp-slow-rg-'))
  const marker = path.join(dir, 'reported')
  return {
    // Content searches count first: this counting pass reports its file, then runs on until it is stopped.
    path: scriptRg(dir, 'rg', `case "$*" in *--count*) ${countRecord(file, 1)}; : > '${marker}'; exec sleep 60;; esac\nprintf '%s\\n' '${beginEvent(file)}' '${matchEvent(file)}' '${endEvent(file)}'`),
    reported: async () => { await waitUntil(() => fs.existsSync(marker), 'ripgrep to report its match') }
  }
}
