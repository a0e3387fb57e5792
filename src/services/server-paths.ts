// The rule of docs/errors.md: a tool answer never shows an absolute path of the server. Messages from below (SQLite,
// a thread, git, ripgrep) are passed through this before they reach a tool answer; the log keeps them whole.

/** What an absolute path no name is given for becomes. */
export const SERVER_PATH = '(a server path)'

/**
 * `text` without absolute server paths: each `[path, name]` in `named` is replaced by its name (longer paths first,
 * so a file is named before its folder), and any other absolute path by `placeholder`. A URL's `//` is not a path,
 * nor is a lone `/`.
 */
export function withoutServerPaths (text: string, named: ReadonlyArray<readonly [string, string]> = [], placeholder = SERVER_PATH): string {
  let out = text
  for (const [path, name] of [...named].sort((a, b) => b[0].length - a[0].length)) out = out.split(path).join(name)
  // A path ends at a space, a quote or a bracket; a colon, comma or full stop after it is the sentence's.
  return out.replace(/(^|[\s'"(=:])\/(?!\/)[^\s'")]*[^\s'"):,.;/]/g, `$1${placeholder}`)
}
