/**
 * Kubernetes resource quantities (`'1Gi'`, `'1500M'`, `'1.5Gi'`, `'2e9'`) as whole bytes, for
 * comparing a claim's request with a volume's capacity the way `resource.Quantity.Cmp` does, and for
 * sizes a provisioner enforces or reports.
 */

/** Binary and decimal suffixes as powers: `[base, exponent]`. */
const suffixes: Readonly<Record<string, readonly [bigint, bigint]>> = {
  Ki: [2n, 10n],
  Mi: [2n, 20n],
  Gi: [2n, 30n],
  Ti: [2n, 40n],
  Pi: [2n, 50n],
  Ei: [2n, 60n],
  n: [10n, -9n],
  u: [10n, -6n],
  m: [10n, -3n],
  '': [10n, 0n],
  k: [10n, 3n],
  M: [10n, 6n],
  G: [10n, 9n],
  T: [10n, 12n],
  P: [10n, 15n],
  E: [10n, 18n],
};

const pattern = /^([+-]?)(\d*)(?:\.(\d*))?(?:([eE][+-]?\d+)|(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E))?$/;

/**
 * The bytes `quantity` stands for, rounded up to a whole byte (as the API server rounds storage).
 *
 * @throws TypeError when `quantity` is not a Kubernetes quantity.
 */
export function quantityBytes(quantity: string): bigint {
  const match = pattern.exec(quantity.trim());
  const [, sign = '', whole = '', fraction = '', exponent, suffix = ''] = match ?? [];
  if (match === null || whole + fraction === '') throw new TypeError(`"${quantity}" is not a quantity`);
  const [base, power] =
    exponent === undefined ? (suffixes[suffix] ?? [10n, 0n]) : [10n, BigInt(exponent.slice(1))];
  // value = digits × 10^-fraction.length × base^power, as an exact fraction numerator / denominator.
  let numerator = BigInt(whole + fraction || '0');
  let denominator = 10n ** BigInt(fraction.length);
  if (power >= 0n) numerator *= base ** power;
  else denominator *= base ** -power;
  const bytes = (numerator + denominator - 1n) / denominator;
  return sign === '-' ? -bytes : bytes;
}

/** `a` compared with `b`: negative, zero or positive. A missing quantity counts as zero. */
export function compareQuantities(a: string | undefined, b: string | undefined): number {
  const difference = quantityBytes(a ?? '0') - quantityBytes(b ?? '0');
  return difference === 0n ? 0 : difference < 0n ? -1 : 1;
}

/**
 * The bytes of a storage size such as a PV's `spec.capacity.storage`, rounded up; `undefined` when
 * it is absent, not a quantity, or negative, so a caller can refuse rather than guess.
 */
export function storageBytes(quantity: string | undefined): bigint | undefined {
  if (quantity === undefined) return undefined;
  try {
    const bytes = quantityBytes(quantity);
    return bytes < 0n ? undefined : bytes;
  } catch {
    return undefined;
  }
}
