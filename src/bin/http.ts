/** `workspace-mcp serve` (being built: Streamable HTTP plugin). */
export async function main (_argv: string[]): Promise<void> {
  process.stderr.write('workspace-mcp serve: not implemented yet\n')
  process.exitCode = 1
}
