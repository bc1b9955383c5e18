#!/usr/bin/env node
/** `nfs-client-provisioner`; see the package README for flags, environment and exit codes. */
import { runNfsProvisionerCli } from '@kube-provisioner/nfs-subdir';

process.exitCode = await runNfsProvisionerCli({ program: 'nfs-client-provisioner', dialect: 'nfs-client' });
