/**
 * nfs-subdir-provisioner as the end-to-end tests run it: the package's bin under the example
 * deployment's RBAC, on nfs-ganesha exports (see testenv's `useNfsProvisioners`).
 */
import { join } from 'node:path';
import { workspaceBinCommand } from '@kube-provisioner/testenv';
import { type TestEnv, useNfsProvisioners } from '@kube-provisioner/testenv/testing';

const packageDir = join(import.meta.dirname, '..');

/** The provisioners of one test file, named after `prefix`. Call once per file, outside tests. */
export function useExampleDeployment(env: TestEnv, prefix: string): ReturnType<typeof useNfsProvisioners> {
  return useNfsProvisioners(env, {
    command: workspaceBinCommand(packageDir, 'nfs-subdir-provisioner'),
    deployDir: join(packageDir, '..', '..', 'examples', 'nfs', 'deploy'),
    prefix,
    // The Lease watch is an optional speed-up the example Role deliberately does not grant.
    expectedDenials: /Cannot watch the lease/u,
  });
}
