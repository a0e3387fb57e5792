/** `workspace-mcp check` (being built in issue #4). */
export async function main (_argv: string[]): Promise<void> {
  process.stderr.write('workspace-mcp check: not implemented yet\n')
  process.exitCode = 1
}
