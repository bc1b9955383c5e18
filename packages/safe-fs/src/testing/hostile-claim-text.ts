/**
 * fast-check arbitraries for claim metadata and `pathPattern`s written by an attacker: property
 * tests of a provisioner feed them in and check that no volume path ever leaves its root.
 */
// biome-ignore-all lint/suspicious/noTemplateCurlyInString: pathPattern placeholders are literal text, not JS templates
import fc from 'fast-check';

// Fragments an attacker would try, mixed with arbitrary (including non-BMP) text and names long
// enough to overflow a path component.
const fragment: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    '',
    '.',
    '..',
    '/',
    '../',
    '/..',
    '..//..',
    '\\..',
    '\u0000',
    '%2e%2e',
    '\u2025',
    'ä/ö',
    '🙂',
    'victim',
  ),
  fc.string({ unit: 'grapheme', maxLength: 12 }),
  fc.string({ unit: 'binary', maxLength: 12 }),
  fc.string({ minLength: 240, maxLength: 300 }),
);

/** A namespace, name, label or annotation value made of one to four hostile fragments. */
export const hostileClaimText: fc.Arbitrary<string> = fc
  .array(fragment, { minLength: 1, maxLength: 4 })
  .map((parts) => parts.join(''));

/**
 * A `pathPattern` mixing placeholders with separators and dot segments. Its placeholders read the
 * claim's namespace and name, the PV name, label `app` and annotations `path` and `missing`.
 */
export const hostilePathPattern: fc.Arbitrary<string> = fc
  .array(
    fc.oneof(
      fc.constantFrom(
        '${.PVC.namespace}',
        '${.PVC.name}',
        '${.PV.name}',
        '${.PVC.labels.app}',
        '${.PVC.annotations.path}',
        '${.PVC.annotations.missing}',
      ),
      fc.constantFrom('/', '-', '..', '.', 'x'),
    ),
    { minLength: 1, maxLength: 6 },
  )
  .map((parts) => parts.join(''));

/** Claim metadata and a class pattern that reads it, every field hostile (see {@link hostileClaim}). */
export interface HostileClaim {
  readonly namespace: string;
  readonly name: string;
  /** Label `app`, which {@link hostilePathPattern} reads. */
  readonly labels: { readonly app: string };
  /** Annotation `path`, which {@link hostilePathPattern} reads. */
  readonly annotations: { readonly path: string };
  readonly pathPattern: string;
}

/** A claim whose namespace, name, label `app` and annotation `path` are hostile, with a pattern over them. */
export const hostileClaim: fc.Arbitrary<HostileClaim> = fc.record({
  namespace: hostileClaimText,
  name: hostileClaimText,
  labels: fc.record({ app: hostileClaimText }),
  annotations: fc.record({ path: hostileClaimText }),
  pathPattern: hostilePathPattern,
});
