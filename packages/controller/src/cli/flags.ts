/**
 * Command-line flags with environment fallbacks: one table of {@link FlagSpec}s gives the parser, the
 * typed readers and the `--help` text, so a flag cannot be documented under another name than it is
 * read. Every flag takes a value (`--name value` or `--name=value`); a flag wins over its environment
 * variable, and an empty value counts as unset, so a manifest can blank a variable to get the default.
 */
import { isAbsolute, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { hasBrand, markBranded } from '../util/brand.ts';
import { goBooleanSpellings, parseGoBoolean, parseGoDuration } from './go-syntax.ts';

/** One flag. */
export interface FlagSpec {
  /** Environment variable read when the flag is absent. */
  readonly env?: string;
  /** One line for the help text. */
  readonly description: string;
  /** Value when neither the flag nor the variable is set; shown in the help text. */
  readonly default?: string;
}

/** A program's flags by name (without the leading `--`); `help` is always added. */
export type FlagSpecs<Name extends string = string> = Readonly<Record<Name, FlagSpec>>;

/** Environment variables, as `process.env`. */
export type Environment = Readonly<Record<string, string | undefined>>;

const usageErrorBrand: unique symbol = Symbol.for('@kube-provisioner/controller/UsageError');

/** An invalid command line or environment: the CLI prints it with the help text and exits with 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';

  constructor(message: string) {
    super(message);
    markBranded(this, usageErrorBrand);
  }
}

/** Whether `err` is a {@link UsageError} from any copy of this package. */
export function isUsageError(err: unknown): err is UsageError {
  return hasBrand(err, usageErrorBrand);
}

/** Parsed flags: typed readers that apply the fallbacks and throw a {@link UsageError} naming the flag. */
export class ParsedFlags<Name extends string> {
  /** `--help` or `-h` was given: readers of required settings then return `''` instead of throwing. */
  readonly help: boolean;
  readonly #specs: FlagSpecs<Name>;
  readonly #values: Readonly<Record<string, string | boolean | undefined>>;
  readonly #env: Environment;

  constructor(
    specs: FlagSpecs<Name>,
    values: Readonly<Record<string, string | boolean | undefined>>,
    env: Environment,
  ) {
    this.#specs = specs;
    this.#values = values;
    this.#env = env;
    this.help = values.help === true;
  }

  /** The flag, else its environment variable, else its default. */
  string(name: Name): string | undefined {
    const spec: FlagSpec = this.#specs[name];
    const flag = this.#values[name];
    const value = typeof flag === 'string' ? flag : spec.env === undefined ? undefined : this.#env[spec.env];
    return value === undefined || value === '' ? spec.default : value;
  }

  /** Like {@link string}, but refuses to start without a value (unless `--help`). */
  required(name: Name): string {
    const value = this.string(name);
    if (value !== undefined || this.help) return value ?? '';
    const { env } = this.#specs[name];
    throw new UsageError(
      env === undefined ? `--${name} not set` : `${env} not set: pass --${name} or set ${env}`,
    );
  }

  /** A decimal integer in `[min, max]`. */
  integer(name: Name, min: number, max: number): number {
    const value = this.string(name);
    const number = Number(value);
    if (value === undefined || !/^\d+$/u.test(value) || number < min || number > max) {
      throw new UsageError(
        `--${name} must be an integer from ${min} to ${max}, got ${JSON.stringify(value)}`,
      );
    }
    return number;
  }

  /**
   * An absolute directory other than `/`, normalised (`..`, doubled and trailing slashes resolved):
   * a volume root that can never be the whole filesystem.
   */
  directory(name: Name): string {
    const value = this.string(name);
    if (value === undefined || !isAbsolute(value) || resolve(value) === '/') {
      throw new UsageError(`--${name} must be an absolute path other than /, got ${JSON.stringify(value)}`);
    }
    return resolve(value);
  }

  /** A decimal number above zero, fractions allowed (`0.5`). */
  positiveNumber(name: Name): number {
    const value = this.string(name);
    const number = Number(value);
    if (value === undefined || !/^\d+(?:\.\d+)?$/u.test(value) || !(number > 0)) {
      throw new UsageError(`--${name} must be a number above 0, got ${JSON.stringify(value)}`);
    }
    return number;
  }

  /**
   * A Go boolean (`strconv.ParseBool`). The message names the environment variable when there is one:
   * that is how the Go programs it replaces are configured.
   */
  goBoolean(name: Name): boolean {
    const value = this.string(name) ?? '';
    const parsed = parseGoBoolean(value);
    if (parsed === undefined) {
      const label = this.#specs[name].env ?? `--${name}`;
      throw new UsageError(
        `${label} must be a Go boolean (${goBooleanSpellings}), got ${JSON.stringify(value)}`,
      );
    }
    return parsed;
  }

  /** A positive Go duration such as `15s` or `1m30s`, in milliseconds. */
  goDuration(name: Name): number {
    const value = this.string(name) ?? '';
    const ms = parseGoDuration(value);
    if (ms === undefined || ms <= 0) {
      throw new UsageError(
        `--${name} must be a positive Go duration such as 15s, got ${JSON.stringify(value)}`,
      );
    }
    return ms;
  }
}

/**
 * Parses `argv` (the arguments after the script) against `specs`.
 *
 * @throws UsageError for unknown flags, a flag without its value, or positional arguments.
 */
export function parseFlags<Name extends string>(
  specs: FlagSpecs<Name>,
  argv: readonly string[],
  env: Environment,
): ParsedFlags<Name> {
  try {
    const { values } = parseArgs({
      args: [...argv],
      strict: true,
      allowPositionals: false,
      options: {
        ...Object.fromEntries(Object.keys(specs).map((name) => [name, { type: 'string' as const }])),
        help: { type: 'boolean', short: 'h' },
      },
    });
    return new ParsedFlags(specs, values, env);
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

/** The `--help` text: one aligned line per flag with its environment variable and default. */
export function usageText(program: string, specs: FlagSpecs): string {
  const rows: [string, string][] = Object.entries(specs).map(([name, spec]: [string, FlagSpec]) => [
    `--${name} <value>`,
    [
      spec.env === undefined ? '' : `[$${spec.env}] `,
      spec.description,
      spec.default === undefined ? '' : ` (default ${spec.default})`,
    ].join(''),
  ]);
  rows.push(['--help', 'print this help']);
  const width = Math.max(...rows.map(([flag]) => flag.length));
  const lines = rows.map(([flag, text]) => `  ${flag.padEnd(width)}  ${text}`);
  return [`Usage: ${program} [flags]`, '', ...lines].join('\n');
}
