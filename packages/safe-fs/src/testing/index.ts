/**
 * Test support for provisioners built on `@kube-provisioner/safe-fs`: fast-check arbitraries of
 * hostile claim metadata and path patterns (they need the optional peer dependency `fast-check`), and
 * a comparable snapshot of a directory tree.
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
