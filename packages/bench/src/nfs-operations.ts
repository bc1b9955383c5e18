/**
 * The nfs-operations scenario: NFS operations per provision and per delete on a kernel NFS mount.
 * nfs-subdir (ours, its CLI bundled as the image bundles it) and, when given, upstream
 * nfs-subdir-external-provisioner (a binary built from its public source, e.g. v4.0.2) run one after
 * the other inside the test guest (User-Mode Linux: this machine's kernel has no NFS client), each on
 * the same NFSv4.1 mount of one test export at upstream's hard-coded `/persistentvolumes`. The mount's
 * per-operation counters (`/proc/self/mountstats`) are read after a warm-up claim is bound, after the
 * claims are bound, and after they are deleted; every RPC the client sent in between counts, whichever
 * process caused it. Both use the class parameter `archiveOnDelete: "false"`, so a delete removes the
 * directory.
 */
import { access, constants, copyFile, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClaims, startNfsServer, waitFor } from '@kube-provisioner/testenv';
import {
  type Guest,
  type GuestProgram,
  mountNfs,
  type NfsOperationStats,
  nfsMountStats,
  startGuest,
} from '@kube-provisioner/testenv/guest';
import { bundleProgram } from '@kube-provisioner/testenv/internal';
import { CoreV1Api, StorageV1Api } from '@kubernetes/client-node';
import { numberedNames, runLabel } from './fixtures.ts';
import type {
  NfsImplementation,
  NfsImplementationResult,
  NfsOperationsPerClaim,
  NfsOperationsResult,
} from './report.ts';
import type { RunContext } from './run-context.ts';

/** Options of {@link runNfsOperations}. */
export interface NfsOperationsOptions {
  /** Claims each implementation provisions and deletes, after one warm-up claim. */
  readonly claims: number;
  /** The upstream binary, measured after ours; ours alone when undefined. */
  readonly upstream: string | undefined;
  readonly log: (message: string) => void;
}

const mountPoint = '/persistentvolumes';
const exportPath = '/export';

/**
 * Operations per claim between two readings of the mount's counters, by operation, two decimals;
 * operations that did not change are left out, and `total` sums the rest.
 */
export function operationsPerClaim(
  before: Readonly<Record<string, Pick<NfsOperationStats, 'operations'>>>,
  after: Readonly<Record<string, Pick<NfsOperationStats, 'operations'>>>,
  claims: number,
): NfsOperationsPerClaim {
  const result: Record<string, number> = {};
  let total = 0;
  for (const [name, stats] of Object.entries(after)) {
    const count = stats.operations - (before[name]?.operations ?? 0);
    if (count === 0) continue;
    result[name] = Number((count / claims).toFixed(2));
    total += count;
  }
  result.total = Number((total / claims).toFixed(2));
  return result;
}

/** Boots the guest, mounts the export and measures ours, then upstream when given. */
export async function runNfsOperations(
  context: RunContext,
  options: NfsOperationsOptions,
): Promise<NfsOperationsResult> {
  const { upstream, log } = options;
  // Before the guest boots: a wrong path should not cost a whole run of ours first.
  if (upstream !== undefined) await access(upstream, constants.X_OK);
  const exportDir = await mkdtemp(join(tmpdir(), 'nfs-operations-'));
  const guest = await startGuest({ onProgress: log });
  const server = await startNfsServer({ exportPath, exportDir });
  try {
    const endpoint = await guest.exposeNfsServer(server);
    const mount = await mountNfs(guest, { server: endpoint.address, path: exportPath }, mountPoint);
    const bin = join(guest.shareDir, 'bin');
    await mkdir(bin, { recursive: true });
    const oursBundle = join(bin, 'nfs-subdir-provisioner.mjs');
    await bundleProgram({
      entry: join(import.meta.dirname, '../../nfs-subdir/src/cli.ts'),
      outfile: oursBundle,
    });
    const measure = (
      implementation: NfsImplementation,
      start: (env: Record<string, string>) => Promise<GuestProgram>,
    ): Promise<NfsImplementationResult> =>
      measureImplementation(context, guest, {
        ...options,
        implementation,
        start,
        nfsServer: endpoint.address,
      });
    const results = [
      await measure('ours', (env) =>
        guest.spawn(['node', guest.guestPath(oursBundle), '--mount-root', mountPoint], { env }),
      ),
    ];
    if (upstream !== undefined) {
      const upstreamBinary = join(bin, 'nfs-subdir-external-provisioner');
      await copyFile(upstream, upstreamBinary);
      results.push(
        await measure('upstream', (env) => guest.spawn([guest.guestPath(upstreamBinary)], { env })),
      );
    }
    await mount.unmount();
    return { claims: options.claims, results };
  } finally {
    await guest.stop();
    await server.stop();
    await rm(exportDir, { recursive: true, force: true });
  }
}

/** One implementation's run: how it starts in the guest, given its environment. */
interface ImplementationRun extends NfsOperationsOptions {
  readonly implementation: NfsImplementation;
  readonly start: (env: Record<string, string>) => Promise<GuestProgram>;
  readonly nfsServer: string;
}

/** Starts one implementation with a class and namespace of its own, and counts its two phases. */
async function measureImplementation(
  context: RunContext,
  guest: Guest,
  run: ImplementationRun,
): Promise<NfsImplementationResult> {
  const { cluster, runId } = context;
  const { implementation, claims, log } = run;
  const core = cluster.kubeConfig.makeApiClient(CoreV1Api);
  const storage = cluster.kubeConfig.makeApiClient(StorageV1Api);
  const suffix = `${implementation}-${runId}`;
  const provisionerName = `nfs-operations.kube-provisioner.io/${suffix}`;
  const storageClassName = `nfs-operations-${suffix}`;
  const namespace = `nfs-operations-${suffix}`;
  const labels = { [runLabel]: runId };
  await core.createNamespace({ body: { metadata: { name: namespace, labels } } });
  await storage.createStorageClass({
    body: {
      metadata: { name: storageClassName, labels },
      provisioner: provisionerName,
      parameters: { archiveOnDelete: 'false' },
      reclaimPolicy: 'Delete',
    },
  });
  const program = await run.start({
    NFS_SERVER: run.nfsServer,
    NFS_PATH: exportPath,
    PROVISIONER_NAME: provisionerName,
    POD_NAMESPACE: namespace,
    KUBECONFIG: await guest.kubeconfig(cluster.kubeconfigPath),
    METRICS_PORT: '0',
  });
  /**
   * Waits until every claim of `names` is Bound (resolves with how many are) or, after deleting
   * them, until their PVs are gone (resolves with how many PVs there were).
   */
  const phase = async (names: readonly string[], state: 'Bound' | 'gone'): Promise<number> => {
    const list = async () =>
      (await core.listNamespacedPersistentVolumeClaim({ namespace })).items.filter((claim) =>
        names.includes(claim.metadata?.name ?? ''),
      );
    const volumes = async () =>
      (await core.listPersistentVolume()).items.filter(
        (pv) =>
          pv.spec?.storageClassName === storageClassName && names.includes(pv.spec.claimRef?.name ?? ''),
      );
    if (state === 'Bound') {
      await createClaims(cluster.kubeConfig, { namespace, storageClassName, names });
      return waitFor(
        async () => {
          const bound = (await list()).filter((claim) => claim.status?.phase === 'Bound').length;
          return bound === names.length ? bound : undefined;
        },
        { timeoutMs: 300_000, description: `${names.length} claims of ${implementation} to be Bound` },
      );
    }
    const provisioned = (await volumes()).length;
    await Promise.all(names.map((name) => core.deleteNamespacedPersistentVolumeClaim({ namespace, name })));
    await waitFor(async () => (await volumes()).length === 0, {
      timeoutMs: 120_000,
      description: `the PVs of ${implementation} to be deleted`,
    });
    return provisioned;
  };
  try {
    // The warm-up claim leaves start-up, leader election and first lookups out of the counts.
    await phase(['warm-up'], 'Bound');
    const names = numberedNames('claim', claims);
    const ready = await nfsMountStats(guest, mountPoint);
    const provisionStart = performance.now();
    const bound = await phase(names, 'Bound');
    const provisionMs = performance.now() - provisionStart;
    const afterBound = await nfsMountStats(guest, mountPoint);
    const deleteStart = performance.now();
    const deleted = await phase(names, 'gone');
    const deleteMs = performance.now() - deleteStart;
    const afterDeleted = await nfsMountStats(guest, mountPoint);
    await phase(['warm-up'], 'gone');
    log(`nfs-operations: ${implementation} provisioned and deleted ${claims} claims`);
    return {
      implementation,
      provision: operationsPerClaim(ready, afterBound, claims),
      delete: operationsPerClaim(afterBound, afterDeleted, claims),
      bound,
      deleted,
      provision_ms_per_claim: Math.round(provisionMs / claims),
      delete_ms_per_claim: Math.round(deleteMs / claims),
    };
  } catch (err) {
    log(`${implementation} failed; its last output:\n${program.output().slice(-6000)}`);
    throw err;
  } finally {
    const code = await program.stop();
    if (code !== 0) log(`${implementation} exited with ${code}:\n${program.output().slice(-4000)}`);
    await core.deleteNamespace({ name: namespace }).catch(() => undefined);
    await storage.deleteStorageClass({ name: storageClassName }).catch(() => undefined);
  }
}
