/**
 * Test-side helpers for end-to-end tests run with the kube-testenv vitest global setup: the cluster's
 * KubeConfig, namespaces and fake Nodes that are deleted after the file's tests, ServiceAccount
 * kubeconfigs, the control plane's fault hooks and NFS provisioners under test; and, for unit tests,
 * running a CLI to completion.
 *
 * Stability: stable (see "Versioning" in the repository README).
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiException, CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { afterAll, inject } from 'vitest';
import { attachControlPlane } from './control-plane.ts';
import { createFakeNode } from './fake-node.ts';
import { type NfsProvisionerUnderTest, startNfsProvisioner } from './nfs-provisioner-process.ts';
import { exportEntries, useNfsHarness } from './nfs-provisioners-harness.ts';
import type { ProgramCommand } from './program-process.ts';
import { mintServiceAccountKubeconfig } from './service-account-kubeconfig.ts';
import { type TestEnv, uniqueName } from './test-env.ts';
import type { TestenvContext } from './vitest-context.ts';
import { waitFor } from './wait-for.ts';

export {
  type GuestNfsDeployment,
  type GuestNfsDeployOptions,
  type GuestNfsProvisioners,
  type GuestNfsProvisionersOptions,
  guestLeaseFlags,
  useGuestNfsProvisioners,
} from './guest/guest-nfs-provisioners.ts';
export { guestAvailable, useGuest } from './guest/use-guest.ts';
export { type NfsProvisionerUnderTest, reachVolumeOverNfs } from './nfs-provisioner-process.ts';
export { nfsToolsAvailable } from './nfs-tools.ts';
export { type ContainerExit, type PodExitRecorder, recordPodExits } from './node/pod-exits.ts';
export {
  describePod,
  podLogs,
  type ReadyPodsQuery,
  waitForPodPhase,
  waitForReadyPods,
} from './node/pod-waits.ts';
export {
  type RealNodeAccess,
  realNodeAvailable,
  type UseRealNodeOptions,
  useRealNode,
} from './node/use-real-node.ts';
export {
  type DeploymentAccount,
  deploymentAccount,
  type TestEnv,
  uniqueName,
} from './test-env.ts';

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
      // Only made against a cluster testenv did not start; its own state directory keeps them otherwise.
      scratchDir?.then((dir) => rm(dir, { recursive: true, force: true })),
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

/** Options of {@link useNfsProvisioners}. */
export interface NfsProvisionersOptions {
  /** The provisioner CLI, e.g. from `workspaceBinCommand`. */
  readonly command: ProgramCommand;
  /**
   * A kustomization with the deployment's RBAC: its Namespace, ServiceAccount, roles and bindings are
   * applied (nothing else), and the provisioners run as that ServiceAccount, in its namespace.
   */
  readonly deployDir: string;
  /** Prefix of the provisioner and StorageClass names. */
  readonly prefix: string;
  /** Output lines that may mention a denial, because the RBAC deliberately does not grant it. */
  readonly expectedDenials?: RegExp;
}

/** NFS provisioners under test for one file, each on its own nfs-ganesha export. */
export interface NfsProvisioners {
  /**
   * Starts an export at `exportPath` and a provisioner (unique name) for it whose `NFS_PATH` is
   * spelled `nfsPath`. After the file's tests each is stopped; the file fails if one exits non-zero or
   * logged a denial other than {@link NfsProvisionersOptions.expectedDenials}.
   */
  deploy(exportPath: string, nfsPath?: string): Promise<NfsProvisionerUnderTest>;
  /** Creates a StorageClass (reclaim policy Delete) for `deployment`; resolves with its name. */
  storageClass(deployment: NfsProvisionerUnderTest, parameters?: Record<string, string>): Promise<string>;
  /**
   * The sorted entries of a directory on the export, relative to its root, without the dot files
   * that hold the provisioner's records and parent markers; empty if the directory does not exist.
   */
  entries(deployment: NfsProvisionerUnderTest, relative?: string): Promise<string[]>;
}

/**
 * Runs NFS provisioners the way their deployment does, under its RBAC. Call once per file, outside
 * tests; the RBAC is applied at the first {@link NfsProvisioners.deploy}.
 */
export function useNfsProvisioners(env: TestEnv, options: NfsProvisionersOptions): NfsProvisioners {
  const harness = useNfsHarness<NfsProvisionerUnderTest>(env, options);
  return {
    async deploy(exportPath, nfsPath = exportPath) {
      const { kubeconfigPath, namespace } = await harness.credentials();
      const deployment = await startNfsProvisioner({
        command: options.command,
        provisionerName: harness.provisionerName(),
        kubeconfigPath,
        namespace,
        exportPath,
        nfsPath,
      });
      return harness.track(deployment);
    },
    storageClass: harness.storageClass,
    entries: (deployment, relative) => exportEntries(deployment.server.exportDir, relative),
  };
}

/** What a program run by {@link runProgram} did. */
export interface ProgramRun {
  /** Exit code; `null` if a signal ended it, e.g. the timeout's. */
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs a program to completion with nothing in its environment but `PATH` and `env`, so no
 * configuration leaks in from the test's own; killed after `timeoutMs`.
 */
export function runProgram(
  program: ProgramCommand,
  args: readonly string[],
  env: NodeJS.ProcessEnv = {},
  timeoutMs = 20_000,
): ProgramRun {
  const result = spawnSync(program.command, [...program.args, ...args], {
    env: { PATH: process.env.PATH ?? '', ...env },
    encoding: 'utf8',
    timeout: timeoutMs,
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}
