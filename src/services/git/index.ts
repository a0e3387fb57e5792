// The git service's front door: read-only history of the served roots' repositories.
// Everything else in this folder is private to it (eslint.config.js and test/layers.test.ts hold that).
export { createGit, gitRepositories } from './git.js'
export type { BlameLine, CommitDetail, CommitSummary, DiffSides, FileChange, GitRepositories, GitService } from './git.js'
