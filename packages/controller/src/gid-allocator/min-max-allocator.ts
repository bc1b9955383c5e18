/**
 * A set of integers taken from a range `[min, max]` that can be narrowed or widened later: the
 * range allocator of the Go library's `allocator` package. Values taken outside the current range
 * stay taken and count again once the range covers them.
 */

/** Why a {@link MinMaxAllocator} refused: `min > max`, a value already taken, outside the range, or no value left. */
export type RangeAllocatorErrorKind = 'invalid-range' | 'conflict' | 'out-of-range' | 'range-full';

const messages: Readonly<Record<RangeAllocatorErrorKind, string>> = {
  'invalid-range': 'invalid range: min is greater than max',
  conflict: 'number already allocated',
  'out-of-range': 'number out of range',
  'range-full': 'range full: no number left to allocate',
};

/** A refusal of a {@link MinMaxAllocator}; `kind` says which. */
export class RangeAllocatorError extends Error {
  override readonly name = 'RangeAllocatorError';
  readonly kind: RangeAllocatorErrorKind;

  constructor(kind: RangeAllocatorErrorKind, detail?: string) {
    super(detail === undefined ? messages[kind] : `${messages[kind]}: ${detail}`);
    this.kind = kind;
  }
}

/**
 * Integers taken from `[min, max]`. Space grows with the values taken, not with the range, so a
 * sparse use of a range of 2³¹ values costs nothing. Synchronous, hence atomic in one process.
 */
export class MinMaxAllocator {
  #min: number;
  #max: number;
  readonly #used = new Set<number>();

  /** @throws RangeAllocatorError `invalid-range` when `min > max`. */
  constructor(min: number, max: number) {
    checkRange(min, max);
    this.#min = min;
    this.#max = max;
  }

  /** Lowest value of the range. */
  get min(): number {
    return this.#min;
  }

  /** Highest value of the range. */
  get max(): number {
    return this.#max;
  }

  /**
   * Moves the range; values taken stay taken wherever they fall.
   *
   * @throws RangeAllocatorError `invalid-range` when `min > max`.
   */
  setRange(min: number, max: number): void {
    checkRange(min, max);
    this.#min = min;
    this.#max = max;
  }

  /**
   * Takes `value`.
   *
   * @throws RangeAllocatorError `out-of-range` outside the range, `conflict` when already taken.
   */
  allocate(value: number): void {
    if (!this.#inRange(value))
      throw new RangeAllocatorError('out-of-range', `${value} is not in [${this.#min}, ${this.#max}]`);
    if (this.#used.has(value)) throw new RangeAllocatorError('conflict', String(value));
    this.#used.add(value);
  }

  /**
   * Takes and returns the lowest free value of the range.
   *
   * @throws RangeAllocatorError `range-full` when every value of the range is taken.
   */
  allocateNext(): number {
    // At most one step per taken value: the scan ends at the first value not in the set.
    for (let value = this.#min; value <= this.#max; value++) {
      if (!this.#used.has(value)) {
        this.#used.add(value);
        return value;
      }
    }
    throw new RangeAllocatorError('range-full', `every number of [${this.#min}, ${this.#max}] is allocated`);
  }

  /** Frees `value`; freeing a value not taken (or outside the range) does nothing. */
  release(value: number): void {
    this.#used.delete(value);
  }

  /** Whether `value` is taken, inside the range or not. */
  has(value: number): boolean {
    return this.#used.has(value);
  }

  /** How many values of the current range are free. */
  free(): number {
    let usedInRange = 0;
    for (const value of this.#used) if (this.#inRange(value)) usedInRange++;
    return this.#max - this.#min + 1 - usedInRange;
  }

  #inRange(value: number): boolean {
    return this.#min <= value && value <= this.#max;
  }
}

function checkRange(min: number, max: number): void {
  if (!Number.isSafeInteger(min) || !Number.isSafeInteger(max) || min > max) {
    throw new RangeAllocatorError('invalid-range', `[${min}, ${max}]`);
  }
}
