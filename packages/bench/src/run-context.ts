/**
 * What the scenarios of one run share: the cluster, a namespace with its claim timeline, the class
 * and the provisioner's root. Every name carries the run id, so runs against a shared cluster never
 * see each other's objects.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { resources } from '@kube-provisioner/controller/client';
import { CoreV1Api } from '@kubernetes/client-node';
import type { BenchCluster } from './bench-cluster.ts';
import { ClaimTimeline } from './claim-timeline.ts';
import { benchClaim, benchStorageClass, runLabel } from './fixtures.ts';
import { followChanges } from './follow.ts';

/** One namespace of claims, its timeline and the provisioner root they are provisioned into. */
export interface ClaimNamespace {
  readonly namespace: string;
  readonly root: string;
  readonly timeline: ClaimTimeline;
  /** Stops watching; the namespace stays until the run closes. */
  close(): Promise<void>;
}

/** State shared by the scenarios of one run. */
export interface RunContext {
  readonly cluster: BenchCluster;
  readonly runId: string;
  readonly provisionerName: string;
  readonly className: string;
  /** A namespace with a fresh root and a timeline that is already watching. */
  openClaimNamespace(prefix: string): Promise<ClaimNamespace>;
  /** The manifest of claim `name` in `namespace`. */
  claim(
    name: string,
    namespace: string,
    labels?: Readonly<Record<string, string>>,
  ): ReturnType<typeof benchClaim>;
  /** Deletes the run's namespaces, class and roots. */
  close(): Promise<void>;
}

/** Creates the run's StorageClass and returns the context; roots are made in `volumeDir`. */
export async function createRunContext(cluster: BenchCluster, volumeDir: string): Promise<RunContext> {
  const runId = randomBytes(3).toString('hex');
  const provisionerName = `bench.kube-provisioner.io/hostpath-${runId}`;
  const className = `bench-${runId}`;
  await cluster.api
    .resource(resources.storageClasses)
    .create(benchStorageClass(className, provisionerName, runId));
  const namespaces: string[] = [];
  const roots: string[] = [];
  const core = cluster.kubeConfig.makeApiClient(CoreV1Api);
  return {
    cluster,
    runId,
    provisionerName,
    className,
    async openClaimNamespace(prefix) {
      const namespace = `bench-${prefix}-${runId}`;
      await core.createNamespace({ body: { metadata: { name: namespace, labels: { [runLabel]: runId } } } });
      namespaces.push(namespace);
      const root = await mkdtemp(join(volumeDir, `bench-${prefix}-`));
      roots.push(root);
      const timeline = new ClaimTimeline(namespace);
      const stop = new AbortController();
      const watching = Promise.all([
        followChanges(
          cluster.api.resource(resources.persistentVolumeClaims),
          namespace,
          (type, claim, at) => timeline.recordClaim(type, claim, at),
          stop.signal,
        ),
        followChanges(
          cluster.api.resource(resources.persistentVolumes),
          undefined,
          (type, volume, at) => timeline.recordVolume(type, volume, at),
          stop.signal,
        ),
      ]);
      // A failed watch would leave the timeline short and a wait hanging until its deadline: say why.
      watching.catch((err: unknown) => {
        if (!stop.signal.aborted) process.stderr.write(`bench: watch failed: ${String(err)}\n`);
      });
      return {
        namespace,
        root,
        timeline,
        close: async () => {
          stop.abort();
          await watching.catch(() => undefined);
        },
      };
    },
    claim: (name, namespace, labels = {}) =>
      benchClaim(name, namespace, className, { [runLabel]: runId, ...labels }),
    async close() {
      const storage = cluster.api.resource(resources.storageClasses);
      await Promise.allSettled([
        storage.delete(className),
        ...namespaces.map((name) => core.deleteNamespace({ name })),
        ...roots.map((root) => rm(root, { recursive: true, force: true })),
      ]);
    },
  };
}
