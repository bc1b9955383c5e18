#!/usr/bin/env node
/**
 * `nfs-client-provisioner`; see the package README for flags, environment and exit codes. The Node.js
 * version is checked before anything that needs a newer one is loaded.
 */
import { checkNodeVersion } from '@kube-provisioner/controller/node-guard';

const program = 'nfs-client-provisioner';
if (checkNodeVersion(program)) {
  const [{ runNfsProvisionerCli }, { version }] = await Promise.all([
    import('@kube-provisioner/nfs-subdir'),
    import('./version.ts'),
  ]);
  await runNfsProvisionerCli({ program, dialect: 'nfs-client', version });
}
