#!/usr/bin/env node
/** `nfs-subdir-provisioner`; see the package README for flags, environment and exit codes. */
import { runNfsProvisionerCli } from './run-cli.ts';

await runNfsProvisionerCli({ program: 'nfs-subdir-provisioner', dialect: 'nfs-subdir' });
