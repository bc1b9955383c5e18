#!/usr/bin/env node
/** `nfs-client-provisioner`; see the package README for flags, environment and exit codes. */
import { runNfsProvisionerCli } from '@kube-provisioner/nfs-subdir';

await runNfsProvisionerCli({ program: 'nfs-client-provisioner', dialect: 'nfs-client' });
