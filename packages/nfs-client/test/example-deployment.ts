/**
 * nfs-client-provisioner as the end-to-end tests run it: the package's bin under the example
 * deployment's RBAC, on nfs-ganesha exports (see testenv's `useNfsProvisioners`).
 */
import { join } from 'node:path';
import { workspaceBinCommand } from '@kube-provisioner/testenv';
import { nfsExampleDeployment } from '@kube-provisioner/testenv/internal';
import { type TestEnv, useNfsProvisioners } from '@kube-provisioner/testenv/testing';

const packageDir = join(import.meta.dirname, '..');

/**
 * The provisioners of one test file, named after `prefix`, each started with `flags` after the bin.
 * Call once per file, outside tests.
 */
export function useExampleDeployment(
  env: TestEnv,
  prefix: string,
  flags: readonly string[] = [],
): ReturnType<typeof useNfsProvisioners> {
  const bin = workspaceBinCommand(packageDir, 'nfs-client-provisioner');
  return useNfsProvisioners(env, {
    command: { ...bin, args: [...bin.args, ...flags] },
    ...nfsExampleDeployment,
    prefix,
  });
}
