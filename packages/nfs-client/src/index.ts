/**
 * The classic `nfs-client-provisioner` as a configuration of `@kube-provisioner/nfs-subdir`.
 *
 * Stability: experimental. The stable interface of this package is its command-line program, its
 * environment (`NFS_SERVER`, `NFS_PATH`, `PROVISIONER_NAME`) and class parameters; these library
 * exports serve that program and the tests, and may change in a minor release (see "Versioning" in
 * the repository README).
 *
 * @experimental
 *
 * @packageDocumentation
 */
export type { NfsClientProvisionerOptions } from './nfs-client-provisioner.ts';
export { createNfsClientProvisioner } from './nfs-client-provisioner.ts';
/** Version of this package, read from its manifest. */
export { version } from './version.ts';
