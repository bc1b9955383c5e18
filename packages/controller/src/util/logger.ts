/**
 * Structured logging. The {@link Logger} interface is the subset of pino's API the library uses, so a
 * host can pass a pino logger directly; {@link createLogger} is a small JSON logger for hosts without one.
 *
 * Verbosity follows klog: `V(0)`–`V(2)` are `info`, `V(3)`–`V(4)` `debug`, `V(5)`+ `trace`. Object keys
 * follow the Go library's structured logs: `PVC` (`namespace/name`), `PV`, `StorageClass`.
 */

/** Structured fields attached to a log line. */
export type LogFields = Record<string, unknown>;

/** A log method: pino's `(fields, message)` form, or a bare message. */
export interface LogFn {
  (fields: LogFields, message?: string): void;
  (message: string): void;
}

/** Pino-compatible structured logger. */
export interface Logger {
  error: LogFn;
  warn: LogFn;
  info: LogFn;
  debug: LogFn;
  trace: LogFn;
  /** A logger that adds `bindings` to every line. */
  child(bindings: LogFields): Logger;
}

/** Level names, most severe first. */
export type LogLevel = 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

const severity: Record<LogLevel, number> = { silent: 0, error: 1, warn: 2, info: 3, debug: 4, trace: 5 };

/** Maps a klog `-v` verbosity to a level: 0–2 info, 3–4 debug, 5+ trace. */
export function levelForVerbosity(verbosity: number): LogLevel {
  if (verbosity >= 5) return 'trace';
  if (verbosity >= 3) return 'debug';
  return 'info';
}

/** Options of {@link createLogger}. */
export interface LoggerOptions {
  /** Lowest level written. Default `info`. */
  level?: LogLevel;
  /** Fields on every line. */
  bindings?: LogFields;
  /** Where lines go. Default: JSON lines on stderr. */
  write?: (line: string) => void;
  /** Time source for the `time` field. Default `Date.now`. */
  now?: () => number;
  /** How an `Error` field is written. Default `{ type, message, stack }`. */
  serializeError?: (err: Error) => unknown;
}

/** Creates a JSON-lines logger (`{"level":"info","time":…,"msg":…,…fields}`). */
export function createLogger(options: LoggerOptions = {}): Logger {
  const threshold = severity[options.level ?? 'info'];
  const write = options.write ?? ((line: string) => process.stderr.write(`${line}\n`));
  const now = options.now ?? Date.now;
  const bindings = options.bindings ?? {};
  const serializeError = options.serializeError ?? errorFields;

  const method =
    (level: Exclude<LogLevel, 'silent'>): LogFn =>
    (fieldsOrMessage: LogFields | string, message?: string): void => {
      if (severity[level] > threshold) return;
      const fields = typeof fieldsOrMessage === 'string' ? {} : fieldsOrMessage;
      const msg = typeof fieldsOrMessage === 'string' ? fieldsOrMessage : message;
      write(
        JSON.stringify({ level, time: now(), ...bindings, ...serializeErrors(fields, serializeError), msg }),
      );
    };

  return {
    error: method('error'),
    warn: method('warn'),
    info: method('info'),
    debug: method('debug'),
    trace: method('trace'),
    child: (extra) => createLogger({ ...options, bindings: { ...bindings, ...extra } }),
  };
}

/** A logger that drops everything. */
export const silentLogger: Logger = createLogger({ level: 'silent' });

function errorFields(err: Error): unknown {
  return { type: err.name, message: err.message, stack: err.stack };
}

function serializeErrors(fields: LogFields, serializeError: (err: Error) => unknown): LogFields {
  const out: LogFields = {};
  for (const [key, value] of Object.entries(fields))
    out[key] = value instanceof Error ? serializeError(value) : value;
  return out;
}
