import { serveAs } from '../threads/index.js'
import type { WorkspaceRoot } from '../workspace/index.js'
import { scanWorkspace, walkSources, type LaneFound, type ScanLane } from './index-scan.js'

/** A scan lane's thread handler: walks its share of the served roots (its own jail) and answers what it found. */
export function laneHandler (data: { roots: WorkspaceRoot[] }): (request: ScanLane) => Promise<{ found: LaneFound }> {
  return async (lane) => ({ found: await walkSources(await scanWorkspace(data.roots), lane) })
}

serveAs('lane-worker', laneHandler)
