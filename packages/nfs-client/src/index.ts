export type { NfsClientProvisionerOptions } from './nfs-client-provisioner.ts';
export { createNfsClientProvisioner } from './nfs-client-provisioner.ts';
/** Version of this package, read from its manifest. */
export { version } from './version.ts';
