/** Rounding of reported figures: seconds to the millisecond, rates and sizes to two decimals. */

/** Milliseconds to seconds, to the millisecond. */
export function seconds(ms: number): number {
  return Math.round(ms) / 1000;
}

/** Two decimals. */
export function round(value: number): number {
  return Math.round(value * 100) / 100;
}
