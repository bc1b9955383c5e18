/**
 * Marks an object with a registered-symbol brand. Type guards check the brand instead of using
 * `instanceof`, which fails when two copies of the package are loaded.
 */
export function markBranded(target: object, brand: symbol): void {
  Object.defineProperty(target, brand, { value: true, enumerable: false });
}

/** Whether `value` carries `brand`. */
export function hasBrand(value: unknown, brand: symbol): boolean {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[brand] === true;
}
