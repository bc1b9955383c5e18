/**
 * The repository's NFS example deployment (`examples/nfs/deploy`), as the NFS packages' end-to-end
 * tests run their provisioners under it (`useNfsProvisioners`, `useGuestNfsProvisioners`).
 */
import { join } from 'node:path';
import { repositoryRoot } from './images/project-images.ts';

/** A deployment's RBAC for a provisioner under test, and the denials it causes on purpose. */
export interface ExampleDeployment {
  /** The kustomization whose RBAC the provisioner runs under. */
  readonly deployDir: string;
  /** Output lines that mention a denial the RBAC deliberately does not grant. */
  readonly expectedDenials: RegExp;
}

/** `examples/nfs/deploy`: its Role does not grant the Lease watch, an optional speed-up. */
export const nfsExampleDeployment: ExampleDeployment = {
  deployDir: join(repositoryRoot, 'examples', 'nfs', 'deploy'),
  expectedDenials: /Cannot watch the lease/u,
};
