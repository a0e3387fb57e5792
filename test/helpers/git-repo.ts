import { execFileSync } from 'node:child_process'

/** Runs git in `dir` as a test author with fixed dates and no user or system config, so hashes are reproducible. */
export function git (dir: string, args: string[], when = '2024-01-01T12:00:00Z'): string {
  return execFileSync('git', args, {
    cwd: dir,
    encoding: 'utf8',
    env: {
      PATH: process.env.PATH,
      HOME: dir,
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_GLOBAL: '/dev/null',
      GIT_AUTHOR_NAME: 'Alice',
      GIT_AUTHOR_EMAIL: 'alice@example.com',
      GIT_COMMITTER_NAME: 'Alice',
      GIT_COMMITTER_EMAIL: 'alice@example.com',
      GIT_AUTHOR_DATE: when,
      GIT_COMMITTER_DATE: when
    }
  })
}

/** `git init` with a fixed branch name, then one commit of everything in `dir`. */
export function commitAll (dir: string, message: string, when?: string): void {
  git(dir, ['init', '-q', '-b', 'main'])
  git(dir, ['add', '-A'])
  git(dir, ['commit', '-q', '-m', message], when)
}
