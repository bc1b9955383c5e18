/**
 * nfs-subdir-provisioner as the end-to-end tests run it: the package's bin under the example
 * deployment's RBAC, on nfs-ganesha exports (see testenv's `useNfsProvisioners`); or bundled and run
 * in the test guest on a kernel NFS mount of its export (`useGuestNfsProvisioners`).
 */
import { join } from 'node:path';
import { workspaceBinCommand } from '@kube-provisioner/testenv';
import { nfsExampleDeployment } from '@kube-provisioner/testenv/internal';
import {
  type GuestNfsProvisioners,
  type TestEnv,
  useGuestNfsProvisioners,
  useNfsProvisioners,
} from '@kube-provisioner/testenv/testing';

const packageDir = join(import.meta.dirname, '..');

/** The provisioners of one test file, named after `prefix`. Call once per file, outside tests. */
export function useExampleDeployment(env: TestEnv, prefix: string): ReturnType<typeof useNfsProvisioners> {
  return useNfsProvisioners(env, {
    command: workspaceBinCommand(packageDir, 'nfs-subdir-provisioner'),
    ...nfsExampleDeployment,
    prefix,
  });
}

/**
 * The provisioners of one test file running in its own guest (booted on first use), named after
 * `prefix`; the package's CLI is bundled as the image's app layer. Call once per file, outside tests.
 */
export function useGuestExampleDeployment(env: TestEnv, prefix: string): GuestNfsProvisioners {
  return useGuestNfsProvisioners(env, {
    ...nfsExampleDeployment,
    entry: join(packageDir, 'src', 'cli.ts'),
    prefix,
  });
}
