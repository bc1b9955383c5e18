/**
 * Command-line flags with environment fallbacks: one table of {@link FlagSpec}s gives the parser, the
 * typed readers and the `--help` text, so a flag cannot be documented under another name than it is
 * read. A flag takes a value (`--name value` or `--name=value`), or is a switch (`--name`,
 * `--name=false`, `--no-name`); one or two dashes alike, as Go's flag package reads them. A flag wins
 * over its environment variable, and an empty value counts as unset, so a manifest can blank a
 * variable to get the default. klog's flags are accepted with a warning (see {@link klogFlags}).
 */
import { isAbsolute, resolve } from 'node:path';
import { hasBrand, markBranded } from '../util/brand.ts';
import { goBooleanSpellings, parseGoBoolean, parseGoDuration } from './go-syntax.ts';
import { klogFlags, klogWarning } from './klog-flags.ts';

/** One flag. */
export interface FlagSpec {
  /** Environment variable read when the flag is absent. */
  readonly env?: string;
  /** One line for the help text. */
  readonly description: string;
  /** Value when neither the flag nor the variable is set; shown in the help text. */
  readonly default?: string;
  /**
   * A switch: `--name` means `true`, `--no-name` `false`, and `--name=<Go boolean>` (or a Go boolean as
   * the next argument) says which. Read it with {@link ParsedFlags.goBoolean}.
   */
  readonly boolean?: boolean;
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
  /** `--version` was given. */
  readonly version: boolean;
  /** One line per flag accepted without effect (klog's), for the program to log once it can. */
  readonly warnings: readonly string[];
  readonly #specs: FlagSpecs<Name>;
  readonly #values: Readonly<Record<string, string>>;
  readonly #env: Environment;

  constructor(specs: FlagSpecs<Name>, argv: ParsedArgv, env: Environment) {
    this.#specs = specs;
    this.#values = argv.values;
    this.#env = env;
    this.help = argv.help;
    this.version = argv.version;
    this.warnings = argv.warnings;
  }

  /** The flag, else its environment variable, else its default. */
  string(name: Name): string | undefined {
    const spec: FlagSpec = this.#specs[name];
    const flag = this.#values[name];
    const value = flag ?? (spec.env === undefined ? undefined : this.#env[spec.env]);
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

/** The command line split into flag values and the built-in switches. */
export interface ParsedArgv {
  /** Values by flag name; a switch holds its Go boolean spelling (`true` for `--name`). */
  readonly values: Readonly<Record<string, string>>;
  readonly help: boolean;
  readonly version: boolean;
  readonly warnings: readonly string[];
}

/**
 * Parses `argv` (the arguments after the script) against `specs`.
 *
 * @throws UsageError for unknown flags, a flag without its value, a switch with a value that is not a
 * Go boolean, or positional arguments.
 */
export function parseFlags<Name extends string>(
  specs: FlagSpecs<Name>,
  argv: readonly string[],
  env: Environment,
): ParsedFlags<Name> {
  return new ParsedFlags(specs, splitArgv(specs, argv), env);
}

function splitArgv(specs: FlagSpecs, argv: readonly string[]): ParsedArgv {
  const values: Record<string, string> = {};
  const warnings: string[] = [];
  let help = false;
  let version = false;
  const switchValue = (flag: string, inline: string | undefined, next: string | undefined) => {
    if (inline !== undefined) {
      if (parseGoBoolean(inline) === undefined) {
        throw new UsageError(
          `${flag} is a switch: use ${flag}, ${flag}=false or --no-${flag.replace(/^-+/u, '')}`,
        );
      }
      return { value: inline, consumed: 0 };
    }
    // Kept for manifests that spelled switches as `--flag false`, when every flag took a value.
    if (next !== undefined && parseGoBoolean(next) !== undefined) return { value: next, consumed: 1 };
    return { value: 'true', consumed: 0 };
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    const match = /^--?(?<name>[^=]+)(?:=(?<inline>[\s\S]*))?$/u.exec(arg);
    const name = match?.groups?.name;
    if (name === undefined || arg === '--') {
      throw new UsageError(`unexpected argument ${JSON.stringify(arg)}: only flags are accepted`);
    }
    const flag = `--${name}`;
    const inline = match?.groups?.inline;
    const next = argv[i + 1];
    const spec: FlagSpec | undefined = Object.hasOwn(specs, name) ? specs[name] : undefined;
    const klog = Object.hasOwn(klogFlags, name) ? klogFlags[name] : undefined;
    if (spec?.boolean === true) {
      const { value, consumed } = switchValue(flag, inline, next);
      values[name] = value;
      i += consumed;
    } else if (spec !== undefined) {
      if (inline !== undefined) values[name] = inline;
      else if (next === undefined)
        throw new UsageError(`${flag} needs a value: ${flag} <value> or ${flag}=<value>`);
      else {
        values[name] = next;
        i += 1;
      }
    } else if (name.startsWith('no-') && specs[name.slice(3)]?.boolean === true && inline === undefined) {
      values[name.slice(3)] = 'false';
    } else if (name === 'help' || name === 'h') {
      help = parseGoBoolean(switchValue(flag, inline, undefined).value) ?? true;
    } else if (name === 'version') {
      version = parseGoBoolean(switchValue(flag, inline, undefined).value) ?? true;
    } else if (klog !== undefined) {
      warnings.push(klogWarning(name, klog));
      if (klog.boolean) i += switchValue(`-${name}`, inline, next).consumed;
      else if (inline === undefined) {
        if (next === undefined) throw new UsageError(`-${name} needs a value`);
        i += 1;
      }
    } else {
      throw new UsageError(`unknown flag ${JSON.stringify(arg.split('=')[0])}; see --help`);
    }
  }
  return { values, help, version, warnings };
}

/** The `--help` text: one aligned line per flag with its environment variable and default. */
export function usageText(program: string, specs: FlagSpecs): string {
  const rows: [string, string][] = Object.entries(specs).map(([name, spec]: [string, FlagSpec]) => [
    spec.boolean === true ? `--[no-]${name}` : `--${name} <value>`,
    [
      spec.env === undefined ? '' : `[$${spec.env}] `,
      spec.description,
      spec.default === undefined ? '' : ` (default ${spec.default})`,
    ].join(''),
  ]);
  rows.push(['--version', 'print the version'], ['--help', 'print this help']);
  const width = Math.max(...rows.map(([flag]) => flag.length));
  const lines = rows.map(([flag, text]) => `  ${flag.padEnd(width)}  ${text}`);
  const klog = Object.keys(klogFlags)
    .map((name) => `-${name}`)
    .join(', ');
  return [
    `Usage: ${program} [flags]`,
    '',
    ...lines,
    '',
    `Accepted and ignored, with a warning, for Go manifests (klog): ${klog}.`,
  ].join('\n');
}
