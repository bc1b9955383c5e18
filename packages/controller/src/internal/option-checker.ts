/** Type and range checks of option values, shared by every option group. */
import type { RateLimit } from '../client/request-limiter.ts';
import type { RateLimiter } from '../workqueue/rate-limiters.ts';

/**
 * Checks the fields of one options object: each check records a problem (naming the key) and
 * falls back to the default, so one pass reports every problem at once.
 */
export class Checker {
  readonly #options: Readonly<Record<string, unknown>>;
  readonly #problems: string[];
  readonly #name: (key: string) => string;

  /** `name` gives a key's name in messages, e.g. with its group. */
  constructor(options: object, problems: string[], name: (key: string) => string = (key) => key) {
    this.#options = options as Readonly<Record<string, unknown>>;
    this.#problems = problems;
    this.#name = name;
  }

  duration(key: string, fallback: number): number {
    const value = this.#options[key];
    if (value === undefined) return fallback;
    if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
      this.#problem(key, `must be a finite number of milliseconds >= 0, got ${String(value)}`);
      return fallback;
    }
    return value;
  }

  integer(key: string, fallback: number, min: number, max: number = Number.MAX_SAFE_INTEGER): number {
    const value = this.#options[key];
    if (value === undefined) return fallback;
    if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
      this.#problem(key, `must be an integer in [${min}, ${max}], got ${String(value)}`);
      return fallback;
    }
    return value;
  }

  boolean(key: string, fallback: boolean): boolean {
    const value = this.#options[key];
    if (value === undefined) return fallback;
    if (typeof value !== 'boolean') {
      this.#problem(key, 'must be a boolean');
      return fallback;
    }
    return value;
  }

  /** A string, or `undefined` when unset or invalid. */
  string(key: string): string | undefined {
    const value = this.#options[key];
    if (value === undefined || typeof value === 'string') return value;
    this.#problem(key, 'must be a string');
    return undefined;
  }

  fn(key: string): void {
    const value = this.#options[key];
    if (value !== undefined && typeof value !== 'function') this.#problem(key, 'must be a function');
  }

  rateLimit(key: string, fallback: RateLimit): RateLimit {
    const value = this.#options[key] as Partial<RateLimit> | undefined;
    if (value === undefined) return fallback;
    const { qps, burst } = value ?? {};
    // The same bounds as the token bucket's: it would throw later, at the first event.
    const valid =
      typeof qps === 'number' &&
      qps > 0 &&
      typeof burst === 'number' &&
      (burst >= 1 || qps === Number.POSITIVE_INFINITY);
    if (!valid) {
      this.#problem(key, `needs qps > 0 and burst >= 1, got ${JSON.stringify(value)}`);
      return fallback;
    }
    return { qps, burst };
  }

  /** Whether the value is unset or a {@link RateLimiter}; records a problem otherwise. */
  limiter(key: string): boolean {
    const value = this.#options[key] as Partial<RateLimiter> | undefined;
    if (value === undefined || (typeof value?.when === 'function' && typeof value.forget === 'function')) {
      return true;
    }
    this.#problem(key, 'must be a RateLimiter');
    return false;
  }

  oneOf<T extends string>(key: string, allowed: readonly T[], fallback: T): T {
    const value = this.#options[key];
    if (value === undefined) return fallback;
    const found = allowed.find((candidate) => candidate === value);
    if (found === undefined) {
      this.#problem(key, `must be one of ${allowed.join(', ')}, got ${String(value)}`);
      return fallback;
    }
    return found;
  }

  #problem(key: string, text: string): void {
    this.#problems.push(`${this.#name(key)} ${text}`);
  }
}
