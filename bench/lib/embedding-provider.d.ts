/** A running embeddings provider the benches and the real-model test use. */
export interface RunningProvider {
  url: string
  model: string
  key?: string
  name: string
  dims: number
  close(): Promise<void>
}

export function missingSharedModel (): string | undefined
export function startSharedModel (): Promise<RunningProvider>
export function benchProvider (log: (line: string) => void): Promise<RunningProvider>
export function probeProvider (provider: { url: string, model: string, key?: string }): Promise<number>
