#!/usr/bin/env node
/**
 * `kube-hostpath-provisioner` (see `main.ts`): checks the Node.js version before loading anything that
 * needs a newer one.
 */
import { checkNodeVersion } from '@kube-provisioner/controller/node-guard';

// libuv reads UV_THREADPOOL_SIZE once, when its pool first starts, and nothing has used the pool yet:
// only the guard above is loaded. Its default of four threads is shared by every file-system call,
// clone copies (two files' data per clone at a time), records' fdatasync and, over NFS, calls waiting
// on a slow server; 16 keeps provisioning and deletes moving beside them (safe-fs README, "Clones").
process.env.UV_THREADPOOL_SIZE ||= '16';

if (checkNodeVersion('kube-hostpath-provisioner')) await import('./main.ts');
