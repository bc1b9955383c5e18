#!/usr/bin/env node
/**
 * `nfs-subdir-provisioner`; see the package README for flags, environment and exit codes. The Node.js
 * version is checked before anything that needs a newer one is loaded.
 */
import { checkNodeVersion } from '@kube-provisioner/controller/node-guard';

// libuv reads UV_THREADPOOL_SIZE once, when its pool first starts, and nothing has used the pool yet:
// only the guard above is loaded. Its default of four threads is shared by every file-system call,
// clone copies (two files' data per clone at a time), records' fdatasync and, over NFS, calls waiting
// on a slow server; 16 keeps provisioning and deletes moving beside them (safe-fs README, "Clones").
process.env.UV_THREADPOOL_SIZE ||= '16';

const program = 'nfs-subdir-provisioner';
if (checkNodeVersion(program)) {
  const [{ runNfsProvisionerCli }, { version }] = await Promise.all([
    import('./run-cli.ts'),
    import('./version.ts'),
  ]);
  await runNfsProvisionerCli({ program, dialect: 'nfs-subdir', version });
}
