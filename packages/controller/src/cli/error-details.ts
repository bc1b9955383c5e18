/**
 * Errors as an operator needs them in a log: the whole `cause` chain (a refused connection is
 * `fetch failed` caused by `connect ECONNREFUSED 10.0.0.1:443`), with the codes that say what failed —
 * the HTTP status and reason of an API error, the system error code and address of a socket error.
 */

/** An error flattened for a JSON log line. */
export interface ErrorDetails {
  readonly type: string;
  readonly message: string;
  /** System error code (`ECONNREFUSED`) or a library's `code`. */
  readonly code?: string | number;
  /** HTTP status of an API error. */
  readonly statusCode?: number;
  /** `Status.reason` of an API error (`Forbidden`, `NotFound`…). */
  readonly reason?: string;
  readonly syscall?: string;
  readonly address?: string;
  readonly port?: number;
  readonly stack?: string;
  /** The errors of an `AggregateError`. */
  readonly errors?: readonly ErrorDetails[];
  readonly cause?: ErrorDetails | string;
}

const maxDepth = 8;

/** `err` with its causes, at most 8 deep (a cycle cannot loop). */
export function errorDetails(err: Error, depth = 0): ErrorDetails {
  const fields = err as Error & Record<string, unknown>;
  const pick = <T>(key: string, type: 'string' | 'number'): Record<string, T> =>
    typeof fields[key] === type ? { [key]: fields[key] as T } : {};
  const { cause } = err;
  return {
    type: err.name,
    message: err.message,
    ...(typeof fields.code === 'string' || typeof fields.code === 'number' ? { code: fields.code } : {}),
    ...pick<number>('statusCode', 'number'),
    ...pick<string>('reason', 'string'),
    ...pick<string>('syscall', 'string'),
    ...pick<string>('address', 'string'),
    ...pick<number>('port', 'number'),
    ...(err.stack === undefined ? {} : { stack: err.stack }),
    ...(err instanceof AggregateError && depth < maxDepth
      ? { errors: err.errors.filter((e) => e instanceof Error).map((e) => errorDetails(e, depth + 1)) }
      : {}),
    ...(cause === undefined || depth >= maxDepth
      ? {}
      : { cause: cause instanceof Error ? errorDetails(cause, depth + 1) : String(cause) }),
  };
}

/**
 * One line per error in the chain, `Type [codes]: message`, for plain-text output. With `stack`, the
 * first error's stack frames follow its line; without, the first line is just its message (and codes).
 */
export function errorChainText(err: unknown, stack = true): string {
  if (!(err instanceof Error)) return String(err);
  const lines: string[] = [];
  for (let details: ErrorDetails | string | undefined = errorDetails(err); details !== undefined; ) {
    if (typeof details === 'string') {
      lines.push(`caused by: ${details}`);
      break;
    }
    const codes = [details.statusCode, details.reason, details.code].filter((c) => c !== undefined);
    const head = `${details.type}${codes.length === 0 ? '' : ` [${codes.join(' ')}]`}: ${details.message}`;
    if (lines.length > 0) lines.push(`caused by: ${head}`);
    else if (stack) lines.push((details.stack ?? head).replace(/^.*/u, head));
    else lines.push(codes.length === 0 ? details.message : `${details.message} [${codes.join(' ')}]`);
    details = details.cause;
  }
  return lines.join('\n');
}
