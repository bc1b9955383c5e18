/**
 * The `kube-hostpath-provisioner` binary as the end-to-end tests of one feature run it: shared mode on
 * a temporary root, under the shipped RBAC through a ServiceAccount kubeconfig, with a StorageClass
 * of its own and a namespace for its claims. Call {@link useSharedCli} once per file.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  applyManifests,
  type RunningProgram,
  startProgram,
  waitFor,
  workspaceBinCommand,
} from '@kube-provisioner/testenv';
import { type TestEnv, uniqueName } from '@kube-provisioner/testenv/testing';
import {
  CoreV1Api,
  type KubernetesObject,
  loadAllYaml,
  StorageV1Api,
  type V1PersistentVolume,
  type V1StorageClass,
  type V1TypedLocalObjectReference,
} from '@kubernetes/client-node';
import { afterAll, beforeAll } from 'vitest';

const packageDir = join(import.meta.dirname, '..');
const systemNamespace = 'kube-provisioner-hostpath';

/** One running instance and what it serves. */
export interface SharedCli {
  readonly provisionerName: string;
  readonly className: string;
  /** A namespace of its own for the test's claims. */
  readonly namespace: string;
  readonly root: string;
  readonly program: RunningProgram;
  /** Creates claim `name` of the class asking for `storage`. */
  createClaim(name: string, storage: string, claim?: ClaimExtras): Promise<void>;
  /** Creates claim `name` of the class asking for `storage`, waits until it is Bound; its PV. */
  bindClaim(name: string, storage: string, claim?: ClaimExtras): Promise<V1PersistentVolume>;
}

/** What a test's claim has besides its name, class, access mode and size. */
export interface ClaimExtras {
  /** Default the CLI's own namespace. */
  readonly namespace?: string;
  readonly annotations?: Record<string, string>;
  readonly dataSource?: V1TypedLocalObjectReference;
}

/** Options of {@link SharedCli}'s start. */
export interface SharedCliOptions {
  /** Prefix of the names (provisioner, class, namespace, root). */
  readonly prefix: string;
  /** More flags, e.g. `--usage-interval=1s`. */
  readonly args?: readonly string[];
  /** `HEALTH_PORT`; default 0 (none). */
  readonly healthPort?: number;
  /** More fields of the StorageClass, e.g. `allowVolumeExpansion`. */
  readonly storageClass?: Partial<V1StorageClass>;
  readonly timeoutMs: number;
}

/** Applies the shipped RBAC before the file's tests and stops what they started after them. */
export function useSharedCli(env: TestEnv): (options: SharedCliOptions) => Promise<SharedCli> {
  const cleanups: (() => Promise<void>)[] = [];
  const core = env.kubeConfig.makeApiClient(CoreV1Api);
  const storage = env.kubeConfig.makeApiClient(StorageV1Api);
  beforeAll(async () => {
    const rbac = await readFile(join(packageDir, 'deploy', 'rbac.yaml'), 'utf8');
    await applyManifests(env.kubeConfig, loadAllYaml(rbac) as KubernetesObject[]);
  });
  afterAll(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  return async (options) => {
    const provisionerName = `e2e.kube-provisioner.io/${uniqueName(options.prefix)}`;
    const className = uniqueName(`hostpath-${options.prefix}`);
    const namespace = await env.namespace(`hostpath-${options.prefix}`);
    const account = await env.serviceAccountKubeconfig({
      namespace: systemNamespace,
      name: 'hostpath-provisioner',
    });
    const root = await mkdtemp(join(tmpdir(), `hostpath-${options.prefix}-`));
    const cli = workspaceBinCommand(packageDir, 'kube-hostpath-provisioner');
    const program = await startProgram({
      command: cli.command,
      args: [
        ...cli.args,
        '--mode=shared',
        `--provisioner-name=${provisionerName}`,
        `--root=${root}`,
        ...(options.args ?? []),
      ],
      env: {
        PATH: process.env.PATH ?? '',
        KUBECONFIG: account.kubeconfigPath,
        HEALTH_PORT: String(options.healthPort ?? 0),
        POD_NAMESPACE: systemNamespace,
      },
    });
    cleanups.push(async () => {
      await program.stop();
      await rm(root, { recursive: true, force: true });
    });
    await storage.createStorageClass({
      body: {
        ...options.storageClass,
        metadata: { name: className },
        provisioner: provisionerName,
        volumeBindingMode: 'Immediate',
      },
    });
    cleanups.push(async () => {
      await storage.deleteStorageClass({ name: className });
    });
    const createClaim = async (name: string, size: string, extras: ClaimExtras = {}) => {
      await core.createNamespacedPersistentVolumeClaim({
        namespace: extras.namespace ?? namespace,
        body: {
          metadata: { name, ...(extras.annotations && { annotations: extras.annotations }) },
          spec: {
            storageClassName: className,
            accessModes: ['ReadWriteOnce'],
            resources: { requests: { storage: size } },
            ...(extras.dataSource && { dataSource: extras.dataSource }),
          },
        },
      });
    };
    return {
      provisionerName,
      className,
      namespace,
      root,
      program,
      createClaim,
      async bindClaim(name, size, extras = {}) {
        await createClaim(name, size, extras);
        return waitFor(
          async () => {
            const claim = await core.readNamespacedPersistentVolumeClaim({
              namespace: extras.namespace ?? namespace,
              name,
            });
            const volumeName = claim.spec?.volumeName;
            return claim.status?.phase === 'Bound' && volumeName
              ? core.readPersistentVolume({ name: volumeName })
              : undefined;
          },
          { timeoutMs: options.timeoutMs, description: `claim ${name} to be bound` },
        );
      },
    };
  };
}
