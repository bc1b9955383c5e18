/**
 * vitest `globalSetup`: one control plane per vitest run, shared by every end-to-end test file.
 * With `TESTENV_KUBECONFIG` set (by `kube-testenv exec` or by hand) it starts nothing and hands that
 * cluster to the tests instead.
 *
 * Stability: stable (see "Versioning" in the repository README).
 */
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { startControlPlane } from './control-plane.ts';
import type { TestenvContext } from './vitest-context.ts';

export type { TestenvContext } from './vitest-context.ts';

/** Starts or reuses the cluster and provides it as `kubeTestenv`; the returned teardown stops it. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const existing = process.env.TESTENV_KUBECONFIG;
  if (existing) {
    const dir = process.env.TESTENV_DIR;
    const context: TestenvContext = dir ? { kubeconfigPath: existing, dir } : { kubeconfigPath: existing };
    project.provide('kubeTestenv', context);
    return async () => {};
  }
  const controlPlane = await startControlPlane({
    dir: join(project.config.root, '.testenv'),
    onProgress: (message) => process.stderr.write(`kube-testenv: ${message}\n`),
  });
  project.provide('kubeTestenv', { kubeconfigPath: controlPlane.kubeconfigPath, dir: controlPlane.dir });
  return () => controlPlane.stop();
}
