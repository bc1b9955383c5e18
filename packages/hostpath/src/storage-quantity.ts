/**
 * A Kubernetes resource quantity (`10Gi`, `500M`, `1.5Gi`, `1e9`) as bytes: what a PV's
 * `spec.capacity.storage` says, to compare a volume's usage with.
 */

const multipliers: Readonly<Record<string, number>> = {
  '': 1,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
};

const quantityPattern = /^(\d+(?:\.\d*)?|\.\d+)(?:([eE][+-]?\d+)|([kMGTPE]i?|Ki)?)$/u;

/**
 * The bytes `quantity` stands for, rounded up as the API server rounds storage; `undefined` when it
 * is absent or not a non-negative quantity (milli and smaller suffixes make no sense for bytes).
 */
export function quantityBytes(quantity: string | undefined): number | undefined {
  const match = quantity === undefined ? null : quantityPattern.exec(quantity.trim());
  if (match === null) return undefined;
  const [, number, exponent, suffix] = match;
  const multiplier = exponent === undefined ? multipliers[suffix ?? ''] : 10 ** Number(exponent.slice(1));
  if (multiplier === undefined) return undefined;
  const bytes = Math.ceil(Number(number) * multiplier);
  return Number.isFinite(bytes) ? bytes : undefined;
}
