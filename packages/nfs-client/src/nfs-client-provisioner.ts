/**
 * The classic nfs-client-provisioner: the shared NFS provisioner of `@kube-provisioner/nfs-subdir`
 * in the `nfs-client` dialect (directory `<ns>-<pvc>-<pv>`, `archiveOnDelete` as the only parameter).
 */
import { NfsProvisioner, type NfsProvisionerOptions } from '@kube-provisioner/nfs-subdir';

/** Options of {@link createNfsClientProvisioner}: those of `NfsProvisioner` without the dialect. */
export type NfsClientProvisionerOptions = Omit<NfsProvisionerOptions, 'dialect'>;

/** A provisioner with nfs-client's configuration surface and on-disk layout. */
export function createNfsClientProvisioner(options: NfsClientProvisionerOptions): NfsProvisioner {
  return new NfsProvisioner({ ...options, dialect: 'nfs-client' });
}
