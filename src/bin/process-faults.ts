import type { Logger } from '../base/logger.js'
import type { ProcessHost } from './process-host.js'

// What a serving command does with a failure nothing caught, decided once, here (docs/deploy.md, "Faults"). Every
// promise the server leaves running ends in a handler of its own, so both are bugs; they are told apart because
// they leave the process in different states:
// - an unhandled rejection is a promise chain that ended without a handler: nothing was interrupted halfway, so
//   the line is logged at fatal with its stack and the server serves on (Node's default would exit, and take every
//   session on the replica with it);
// - an uncaught exception unwound a stack halfway through whatever it was doing, so no state can be trusted: the line
//   is logged at fatal with its stack, and the command exits 1 (after closing its services, bounded) for the
//   supervisor to start it again.

/** Installs the command's handlers for failures nothing caught; `exit` ends the command with a code. */
export function handleFaults (host: ProcessHost, log: Logger, exit: (code: number) => void): void {
  host.faults.on('unhandledRejection', (reason) => {
    log.fatal({ err: reason }, 'unhandled promise rejection (a bug): logged, and the server serves on')
  })
  host.faults.on('uncaughtException', (err) => {
    log.fatal({ err }, 'uncaught exception (a bug): the process state is unknown, exiting 1')
    exit(1)
  })
}
