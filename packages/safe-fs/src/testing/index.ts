/**
 * Test support for provisioners built on `@kube-provisioner/safe-fs`: fast-check arbitraries of
 * hostile claim metadata and path patterns (they need the optional peer dependency `fast-check`), and
 * a comparable snapshot of a directory tree.
 *
 * Stability: experimental. Test support whose arbitraries grow with each hostile input found; names
 * and shapes may change in a minor release (see "Versioning" in the repository README).
 *
 * @experimental
 *
 * @packageDocumentation
 */
export {
  type HostileClaim,
  hostileClaim,
  hostileClaimText,
  hostilePathPattern,
} from './hostile-claim-text.ts';
export { type TreeSnapshotOptions, treeSnapshot } from './tree-snapshot.ts';
