/**
 * The two shipped CLIs as chaos targets: two replicas each, under their shipped RBAC, with leader
 * election on the same Lease. kube-hostpath-provisioner runs in shared mode on one root;
 * nfs-subdir-provisioner runs over one nfs-ganesha export. Each target names its StorageClasses: a
 * bulk class whose data is deleted, classes whose data must survive deletion, and the classes whose
 * deleted data a new claim can take back.
 */
import { readFile } from 'node:fs/promises';
import { join, posix } from 'node:path';
import type { VolumeLayout } from '@kube-provisioner/audit';
import { leaseNameFor } from '@kube-provisioner/controller/leader-election';
import { annTakeBackFrom as hostPathTakeBackFrom } from '@kube-provisioner/hostpath';
import { annTakeBackFrom as nfsTakeBackFrom } from '@kube-provisioner/nfs-subdir';
import {
  applyManifests,
  type NfsServer,
  startNfsServer,
  workspaceBinCommand,
} from '@kube-provisioner/testenv';
import { deploymentAccount, type TestEnv } from '@kube-provisioner/testenv/testing';
import {
  type KubernetesObject,
  loadAllYaml,
  StorageV1Api,
  type V1PersistentVolume,
} from '@kubernetes/client-node';
import { installSnapshotCrd } from './directory-snapshots.ts';
import { type ReplicaSet, startReplicaSet } from './replica-set.ts';

/** What happens to a class's data when its claim is deleted. */
export type DataFate = 'delete' | 'archive' | 'retain';

/** A class whose deleted claims leave data that a new claim can take back. */
export interface KeepingClass {
  readonly storageClassName: string;
  readonly fate: Exclude<DataFate, 'delete'>;
}

/** How a new claim takes back the data of a deleted one (see `take-back-under-kill.ts`). */
export interface TakeBackSupport {
  /** The claim annotation naming the old PV. */
  readonly annotation: string;
  /** Classes that delete the PV but keep its data for taking back. */
  readonly from: readonly KeepingClass[];
}

/** A provisioner under chaos. */
export interface ChaosTarget {
  readonly name: 'hostpath' | 'nfs-subdir';
  readonly provisionerName: string;
  readonly replicas: ReplicaSet;
  readonly leaseNamespace: string;
  readonly leaseName: string;
  /** The directory on disk that holds the volumes (the host root, or the exported directory). */
  readonly root: string;
  readonly layout: VolumeLayout;
  /** StorageClass name per data fate; hostpath has no archive. */
  readonly classes: Readonly<Partial<Record<DataFate, string>>>;
  /**
   * A class deleting its data whose directory is the claim's annotation `path`, whatever its
   * namespace: two claims can render `P` and `P/…` (see `nested-renders.ts`).
   */
  readonly nestedClass: string;
  /** A class deleting its data with `allowVolumeExpansion: true`. */
  readonly expandableClass: string;
  /**
   * Archiving classes whose archives expire within seconds and within an hour, where the target
   * removes expired archives (see `archive-expiry-under-kill.ts`).
   */
  readonly retention?: { readonly expiringClass: string; readonly lastingClass: string };
  /** Whether a retained volume keeps its PV (reclaim policy Retain) rather than only its data. */
  readonly retainKeepsPv: boolean;
  readonly takeBack: TakeBackSupport;
  /**
   * Whether the target takes `DirectorySnapshot`s and restores them (see `snapshot-under-kill.ts`);
   * its cluster has the CRD.
   */
  readonly snapshots: boolean;
  /** The volume directory of `pv` on disk. */
  volumeDir(pv: V1PersistentVolume): string;
  /** Where an archived volume's data is, given its directory before archiving. */
  archivedDir(dir: string): string;
  /** Stops the replicas (and the NFS server). */
  stop(): Promise<void>;
}

/** Common inputs of the target factories. */
export interface TargetContext {
  readonly env: TestEnv;
  /** Prefix of provisioner and class names, unique per run. */
  readonly runId: string;
  readonly logDir: string;
  /** A fresh directory for volumes. */
  readonly root: string;
}

const repositoryRoot = join(import.meta.dirname, '..', '..', '..');
// Debug level: the controller logs its PV creates and deletes there, and they are work lines.
const verbosity = '4';

// biome-ignore lint/suspicious/noTemplateCurlyInString: a pathPattern placeholder, not a JS template
const byAnnotation = '${.PVC.annotations.path}';

interface ClassSpec {
  readonly parameters: Record<string, string>;
  readonly reclaimPolicy: string;
  readonly allowVolumeExpansion?: boolean;
}

async function createClasses<K extends string>(
  env: TestEnv,
  provisionerName: string,
  runId: string,
  specs: Readonly<Record<K, ClassSpec>>,
): Promise<Record<K, string>> {
  const storage = env.kubeConfig.makeApiClient(StorageV1Api);
  const classes: Partial<Record<K, string>> = {};
  for (const [fate, spec] of Object.entries(specs) as [K, ClassSpec][]) {
    const name = `${runId}-${fate}`;
    await storage.createStorageClass({
      body: {
        metadata: { name },
        provisioner: provisionerName,
        parameters: spec.parameters,
        reclaimPolicy: spec.reclaimPolicy,
        ...(spec.allowVolumeExpansion === undefined
          ? {}
          : { allowVolumeExpansion: spec.allowVolumeExpansion }),
      },
    });
    classes[fate] = name;
  }
  return classes as Record<K, string>;
}

/** Two kube-hostpath-provisioner replicas in shared mode on `context.root`. */
export async function startHostPathTarget(context: TargetContext): Promise<ChaosTarget> {
  const { env, runId } = context;
  const packageDir = join(repositoryRoot, 'packages', 'hostpath');
  const rbac = await readFile(join(packageDir, 'deploy', 'rbac.yaml'), 'utf8');
  await applyManifests(env.kubeConfig, loadAllYaml(rbac) as KubernetesObject[]);
  // As users install it: the CRD applied before the provisioner starts (the RBAC above covers it).
  await installSnapshotCrd(env.kubeConfig, join(packageDir, 'deploy', 'snapshot-crd.yaml'));
  const leaseNamespace = 'kube-provisioner-hostpath';
  const account = await env.serviceAccountKubeconfig({
    namespace: leaseNamespace,
    name: 'hostpath-provisioner',
  });
  const provisionerName = `chaos.kube-provisioner.io/${runId}-hostpath`;
  const replicas = await startReplicaSet({
    name: 'hostpath',
    command: workspaceBinCommand(packageDir, 'kube-hostpath-provisioner'),
    args: ['--mode', 'shared', '--root', context.root, '--provisioner-name', provisionerName],
    env: {
      PATH: process.env.PATH ?? '',
      KUBECONFIG: account.kubeconfigPath,
      HEALTH_PORT: '0',
      POD_NAMESPACE: leaseNamespace,
      VERBOSITY: verbosity,
    },
    replicas: 2,
    logDir: context.logDir,
  });
  const { nested, expandable, keep, ...classes } = await createClasses(
    env,
    provisionerName,
    `${runId}-hostpath`,
    {
      delete: { parameters: {}, reclaimPolicy: 'Delete' },
      retain: { parameters: {}, reclaimPolicy: 'Retain' },
      nested: { parameters: { pathPattern: byAnnotation }, reclaimPolicy: 'Delete' },
      expandable: { parameters: {}, reclaimPolicy: 'Delete', allowVolumeExpansion: true },
      // The PV goes and the directory stays, released, for a claim to take back.
      keep: { parameters: { onDelete: 'retain' }, reclaimPolicy: 'Delete' },
    },
  );
  return {
    name: 'hostpath',
    provisionerName,
    replicas,
    leaseNamespace,
    leaseName: leaseNameFor(provisionerName),
    root: context.root,
    layout: { kind: 'hostpath', hostRoot: context.root },
    classes,
    nestedClass: nested,
    expandableClass: expandable,
    retainKeepsPv: true,
    takeBack: {
      annotation: hostPathTakeBackFrom,
      from: [{ storageClassName: keep, fate: 'retain' }],
    },
    snapshots: true,
    volumeDir: (pv) => pv.spec?.hostPath?.path ?? '',
    archivedDir: () => {
      throw new Error('hostpath has no archive');
    },
    stop: () => replicas.stop(),
  };
}

/** Two nfs-subdir-provisioner replicas over one nfs-ganesha export of `context.root`. */
export async function startNfsSubdirTarget(context: TargetContext): Promise<ChaosTarget> {
  const { env, runId } = context;
  const packageDir = join(repositoryRoot, 'packages', 'nfs-subdir');
  const account = await deploymentAccount(env, join(repositoryRoot, 'examples', 'nfs', 'deploy'));
  const server: NfsServer = await startNfsServer({ exportDir: context.root, exportPath: '/export' });
  const provisionerName = `chaos.kube-provisioner.io/${runId}-nfs-subdir`;
  let replicas: ReplicaSet;
  try {
    replicas = await startReplicaSet({
      name: 'nfs-subdir',
      command: workspaceBinCommand(packageDir, 'nfs-subdir-provisioner'),
      args: ['--mount-root', server.exportDir],
      env: {
        PATH: process.env.PATH ?? '',
        NFS_SERVER: server.host,
        NFS_PATH: server.exportPath,
        PROVISIONER_NAME: provisionerName,
        POD_NAMESPACE: account.namespace,
        KUBECONFIG: account.kubeconfigPath,
        METRICS_PORT: '0',
        VERBOSITY: verbosity,
      },
      replicas: 2,
      logDir: context.logDir,
    });
  } catch (err) {
    await server.stop();
    throw err;
  }
  const { nested, expandable, expiring, lasting, ...classes } = await createClasses(
    env,
    provisionerName,
    `${runId}-nfs`,
    {
      delete: { parameters: { onDelete: 'delete' }, reclaimPolicy: 'Delete' },
      archive: { parameters: { onDelete: 'archive' }, reclaimPolicy: 'Delete' },
      retain: { parameters: { onDelete: 'retain' }, reclaimPolicy: 'Delete' },
      nested: { parameters: { onDelete: 'delete', pathPattern: byAnnotation }, reclaimPolicy: 'Delete' },
      expandable: { parameters: { onDelete: 'delete' }, reclaimPolicy: 'Delete', allowVolumeExpansion: true },
      // Long enough that every archive of the phase is seen before any expires.
      expiring: { parameters: { onDelete: 'archive', archiveRetention: '15s' }, reclaimPolicy: 'Delete' },
      lasting: { parameters: { onDelete: 'archive', archiveRetention: '1h' }, reclaimPolicy: 'Delete' },
    },
  );
  return {
    name: 'nfs-subdir',
    provisionerName,
    replicas,
    leaseNamespace: account.namespace,
    leaseName: leaseNameFor(provisionerName),
    root: server.exportDir,
    layout: { kind: 'nfs', exportPath: server.exportPath, server: server.host },
    classes,
    nestedClass: nested,
    expandableClass: expandable,
    retention: { expiringClass: expiring, lastingClass: lasting },
    retainKeepsPv: false,
    takeBack: {
      annotation: nfsTakeBackFrom,
      from: [
        { storageClassName: classes.archive, fate: 'archive' },
        { storageClassName: classes.retain, fate: 'retain' },
      ],
    },
    snapshots: false,
    volumeDir: (pv) => join(server.exportDir, posix.relative(server.exportPath, pv.spec?.nfs?.path ?? '')),
    // The default directory name contains the PV name, so the archive is `archived-<dir>` beside it.
    archivedDir: (dir) => join(dir, '..', `archived-${posix.basename(dir)}`),
    async stop() {
      await replicas.stop();
      await server.stop();
    },
  };
}
