#!/usr/bin/env node
/**
 * `nfs-subdir-provisioner`; see the package README for flags, environment and exit codes. The Node.js
 * version is checked before anything that needs a newer one is loaded.
 */
import { checkNodeVersion } from '@kube-provisioner/controller/node-guard';

const program = 'nfs-subdir-provisioner';
if (checkNodeVersion(program)) {
  const [{ runNfsProvisionerCli }, { version }] = await Promise.all([
    import('./run-cli.ts'),
    import('./version.ts'),
  ]);
  await runNfsProvisionerCli({ program, dialect: 'nfs-subdir', version });
}
