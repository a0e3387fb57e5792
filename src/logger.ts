import pino, { type DestinationStream, type Logger } from 'pino'

/** The logger type every layer receives. */
export type { Logger }

/** Creates the pino logger both transports share; stdio passes fd 2, HTTP fd 1. */
export function createLogger (config: { logLevel: string }, destination: DestinationStream): Logger {
  return pino({
    level: config.logLevel,
    base: { name: 'workspace-mcp' },
    redact: { paths: ['req.headers.authorization', 'req.headers.cookie'], remove: true },
    serializers: { err: pino.stdSerializers.err }
  }, destination)
}
