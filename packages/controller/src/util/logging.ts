/**
 * The controller's JSON-lines logger, for a provisioner's own log lines in the same format.
 *
 * Stability: stable (see "Versioning" in the repository README).
 *
 * @packageDocumentation
 */
export type { LogFields, LogFn, Logger, LoggerOptions, LogLevel } from './logger.ts';
export { createLogger, levelForVerbosity, silentLogger } from './logger.ts';
