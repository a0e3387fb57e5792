import { isatty } from 'node:tty'
import pino, { type DestinationStream, type Logger } from 'pino'

/** The logger type every layer receives. */
export type { Logger }

/** Where logs go (a descriptor: 1 or 2 in the bins): pino-pretty when `format` asks for it or (auto) a person reads a terminal, JSON otherwise. */
export async function logDestination (fd: number, format: string, sync = false): Promise<DestinationStream> {
  if (format === 'pretty' || (format === 'auto' && isatty(fd))) {
    // Loaded only here: a server whose logs go to a pipe or a collector never pays for it.
    const { default: pretty } = await import('pino-pretty')
    return pretty({ destination: fd, sync, colorize: isatty(fd), translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname,name' })
  }
  return pino.destination({ fd, sync })
}

/** Creates the pino logger both transports share; stdio passes fd 2, HTTP fd 1. */
export function createLogger (config: { logLevel: string }, destination: DestinationStream): Logger {
  return pino({
    level: config.logLevel,
    base: { name: 'workspace-mcp' },
    redact: { paths: ['req.headers.authorization', 'req.headers.cookie'], remove: true },
    serializers: { err: pino.stdSerializers.err }
  }, destination)
}

/**
 * The final handler of a promise nothing awaits (background work): its rejection is logged at error with the cause,
 * never left unhandled (Node would end the process, and every session with it). The handler itself cannot throw.
 */
export function logFailure (log: Logger, message: string, fields: Record<string, unknown> = {}): (err: unknown) => void {
  return (err) => { log.error({ ...fields, err }, message) }
}
