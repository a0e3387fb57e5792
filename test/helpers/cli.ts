import { reportFailure, run, type CommandIo } from '../../src/bin/run.js'

/** How one `workspace-mcp …` ended: its exit code and what it wrote. */
export interface CliRun {
  status: number
  stdout: string
  stderr: string
}

/**
 * Runs `workspace-mcp ...args` in this process, as src/cli.ts does: output captured, a thrown error reported
 * the bin's way. Logs still go to file descriptor 2 (the commands write them there, not through `io`).
 */
export async function runCli (args: string[]): Promise<CliRun> {
  let stdout = ''
  let stderr = ''
  const io: CommandIo = { stdout: { write: (text) => { stdout += text } }, stderr: { write: (text) => { stderr += text } } }
  try {
    await run(args, io)
    return { status: Number(io.exitCode ?? 0), stdout, stderr }
  } catch (err) {
    const status = reportFailure(err as Error, io)
    return { status, stdout, stderr }
  }
}
