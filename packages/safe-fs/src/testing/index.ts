/**
 * Test support for provisioners built on `@kube-provisioner/safe-fs`: fast-check arbitraries of
 * hostile claim metadata and path patterns. Needs the optional peer dependency `fast-check`.
 *
 * @packageDocumentation
 */
export {
  type HostileClaim,
  hostileClaim,
  hostileClaimText,
  hostilePathPattern,
} from './hostile-claim-text.ts';
