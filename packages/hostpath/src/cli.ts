#!/usr/bin/env node
/**
 * `kube-hostpath-provisioner` (see `main.ts`): checks the Node.js version before loading anything that
 * needs a newer one.
 */
import { checkNodeVersion } from '@kube-provisioner/controller/node-guard';

if (checkNodeVersion('kube-hostpath-provisioner')) await import('./main.ts');
