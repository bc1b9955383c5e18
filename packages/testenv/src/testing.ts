/**
 * Test-side helpers for end-to-end tests run with the kube-testenv vitest global setup: the cluster's
 * KubeConfig, namespaces and fake Nodes that are deleted after the file's tests, ServiceAccount
 * kubeconfigs, and the control plane's fault hooks.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiException, CoreV1Api, KubeConfig, type V1Node } from '@kubernetes/client-node';
import { afterAll, inject } from 'vitest';
import { attachControlPlane, type ControlPlane } from './control-plane.ts';
import { createFakeNode, type FakeNodeOptions } from './fake-node.ts';
import { missingNfsPackages, NfsToolsMissingError } from './nfs-tools.ts';
import {
  mintServiceAccountKubeconfig,
  type ServiceAccountKubeconfig,
  type ServiceAccountKubeconfigOptions,
} from './service-account-kubeconfig.ts';
import type { TestenvContext } from './vitest-context.ts';
import { waitFor } from './wait-for.ts';

/** The cluster as seen from one test file. */
export interface TestEnv {
  /** Admin kubeconfig file. */
  readonly kubeconfigPath: string;
  /** Admin client configuration. */
  readonly kubeConfig: KubeConfig;
  /** Creates a namespace with a unique name starting with `prefix`; deleted after the file's tests. */
  namespace(prefix?: string): Promise<string>;
  /** Creates a fake Ready Node (unique name unless given); deleted after the file's tests. */
  createNode(options?: FakeNodeOptions & { readonly name?: string }): Promise<V1Node>;
  /** Mints a kubeconfig for a ServiceAccount (created if missing) via the TokenRequest API. */
  serviceAccountKubeconfig(options: ServiceAccountKubeconfigOptions): Promise<ServiceAccountKubeconfig>;
  /**
   * The control plane, for fault hooks (restart kube-apiserver, compact etcd, stop the scheduler…).
   * Rejects on an existing cluster that kube-testenv did not start.
   */
  controlPlane(): Promise<ControlPlane>;
}

/** A DNS-1123 name: `prefix-` and eight random hex digits. */
export function uniqueName(prefix: string): string {
  return `${prefix}-${randomBytes(4).toString('hex')}`;
}

const ignoreNotFound = (err: unknown): void => {
  if (!(err instanceof ApiException && err.code === 404)) throw err;
};

/**
 * Connects a test file to the cluster the global setup provided. Call once per file, outside
 * tests; it registers an `afterAll` hook that deletes what the file created.
 */
export function useTestEnv(): TestEnv {
  const context: TestenvContext = inject('kubeTestenv');
  if (!context) {
    throw new Error(
      'no cluster provided: add @kube-provisioner/testenv/vitest to the globalSetup of this project',
    );
  }
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(context.kubeconfigPath);
  const core = kubeConfig.makeApiClient(CoreV1Api);
  const namespaces: string[] = [];
  const nodes: string[] = [];
  let scratchDir: Promise<string> | undefined;
  const kubeconfigsDir = (): Promise<string> => {
    if (context.dir) return Promise.resolve(join(context.dir, 'kubeconfigs'));
    scratchDir ??= mkdtemp(join(tmpdir(), 'kube-testenv-'));
    return scratchDir;
  };

  afterAll(async () => {
    await Promise.all([
      ...namespaces.map(async (namespace) => {
        // A scheduled pod never terminates gracefully without a kubelet and would block the namespace.
        await core.deleteCollectionNamespacedPod({ namespace, gracePeriodSeconds: 0 }).catch(ignoreNotFound);
        await core.deleteNamespace({ name: namespace }).catch(ignoreNotFound);
      }),
      ...nodes.map((name) => core.deleteNode({ name }).catch(ignoreNotFound)),
    ]);
  });

  return {
    kubeconfigPath: context.kubeconfigPath,
    kubeConfig,
    async namespace(prefix = 'test') {
      const name = uniqueName(prefix);
      await core.createNamespace({ body: { metadata: { name } } });
      namespaces.push(name);
      // Pods are rejected until the serviceaccount controller has created the `default` account.
      await waitFor(() => core.readNamespacedServiceAccount({ namespace: name, name: 'default' }), {
        timeoutMs: 30_000,
        description: `the default ServiceAccount of namespace ${name}`,
      });
      return name;
    },
    async createNode(options = {}) {
      const { name = uniqueName('node'), ...shape } = options;
      const node = await createFakeNode(kubeConfig, name, shape);
      nodes.push(name);
      return node;
    },
    async serviceAccountKubeconfig(options) {
      const dir = await kubeconfigsDir();
      return mintServiceAccountKubeconfig(
        kubeConfig,
        options,
        join(dir, `${options.namespace}.${options.name}.yaml`),
      );
    },
    async controlPlane() {
      if (!context.dir) {
        throw new Error(
          'fault hooks need a kube-testenv control plane; TESTENV_DIR is not set for this cluster',
        );
      }
      return attachControlPlane(context.dir);
    },
  };
}

/**
 * Whether NFS end-to-end tests can run here (nfs-ganesha, its VFS backend and libnfs-utils are
 * installed). Outside CI a missing package makes this false, with a warning naming the packages, so
 * the caller can `describe.skipIf` and the run reports the tests as skipped. With `CI=true` the CI
 * script is supposed to have installed them, so it throws {@link NfsToolsMissingError} instead and
 * the file fails.
 */
export function nfsToolsAvailable(env: NodeJS.ProcessEnv = process.env): boolean {
  const missing = missingNfsPackages(env.PATH);
  if (missing.length === 0) return true;
  const error = new NfsToolsMissingError(missing);
  if (env.CI === 'true') throw error;
  console.warn(`skipping NFS end-to-end tests: ${error.message}`);
  return false;
}
