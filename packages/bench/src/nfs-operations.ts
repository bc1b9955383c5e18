#!/usr/bin/env node
/**
 * NFS operations per provision and per delete, on a kernel NFS mount: nfs-subdir (ours, the bundled
 * CLI the image runs) and, with `--upstream`, upstream nfs-subdir-external-provisioner (a binary built
 * from its public source, e.g. v4.0.2) run one after the other inside the test guest (User-Mode
 * Linux: this machine's kernel has no NFS client), each on the same NFSv4.1 mount of one test export
 * at upstream's hard-coded `/persistentvolumes`, against the cluster of `TESTENV_KUBECONFIG` (or a
 * fresh testenv). The mount's per-operation counters (`/proc/self/mountstats`) are read after a
 * warm-up claim is bound, after `--claims` claims are bound, and after they are deleted; every RPC
 * the client sent in between counts, whichever process caused it. Both use the class parameter
 * `archiveOnDelete: "false"`, so a delete removes the directory. Reported, never asserted.
 *
 *   npm exec -- node packages/testenv/src/cli.ts exec -- npm exec -- node \
 *     --conditions=@kube-provisioner/source packages/bench/src/nfs-operations.ts \
 *     [--claims 50] [--upstream /path/to/nfs-subdir-external-provisioner] [--out <file.json>]
 */
import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import {
  bundleProgram,
  createClaims,
  type Guest,
  type GuestProgram,
  mountNfs,
  type NfsOperationStats,
  nfsMountStats,
  startGuest,
  startNfsServer,
  waitFor,
} from '@kube-provisioner/testenv';
import { CoreV1Api, StorageV1Api } from '@kubernetes/client-node';
import { type BenchCluster, openBenchCluster } from './bench-cluster.ts';

const { values } = parseArgs({
  options: {
    claims: { type: 'string', default: '50' },
    upstream: { type: 'string' },
    out: { type: 'string' },
  },
});
const claims = Number(values.claims);
if (!(Number.isInteger(claims) && claims >= 1)) throw new Error('--claims must be a positive integer');
const log = (message: string): void => {
  process.stderr.write(`${message}\n`);
};

/** Operations of one phase, per claim, by NFS operation; `total` sums them. */
type PerClaim = Record<string, number>;

interface ImplementationResult {
  readonly implementation: string;
  readonly provision: PerClaim;
  readonly delete: PerClaim;
  /** Claims seen Bound after the provision phase, and claims whose PV was gone after the delete phase. */
  readonly bound: number;
  readonly deleted: number;
  /** Wall time of each phase in the guest, ms per claim (User-Mode Linux: indicative only). */
  readonly provisionMsPerClaim: number;
  readonly deleteMsPerClaim: number;
}

const mountPoint = '/persistentvolumes';
const exportPath = '/export';

function perClaim(
  before: Record<string, NfsOperationStats>,
  after: Record<string, NfsOperationStats>,
): PerClaim {
  const result: PerClaim = {};
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

async function measure(
  cluster: BenchCluster,
  guest: Guest,
  implementation: string,
  start: (env: Record<string, string>) => Promise<GuestProgram>,
  nfsServer: string,
): Promise<ImplementationResult> {
  const core = cluster.kubeConfig.makeApiClient(CoreV1Api);
  const storage = cluster.kubeConfig.makeApiClient(StorageV1Api);
  const suffix = `${implementation}-${process.pid}`;
  const provisionerName = `nfs-operations.kube-provisioner.io/${suffix}`;
  const storageClassName = `nfs-operations-${suffix}`;
  const namespace = `nfs-operations-${suffix}`;
  await core.createNamespace({ body: { metadata: { name: namespace } } });
  await storage.createStorageClass({
    body: {
      metadata: { name: storageClassName },
      provisioner: provisionerName,
      parameters: { archiveOnDelete: 'false' },
      reclaimPolicy: 'Delete',
    },
  });
  const program = await start({
    NFS_SERVER: nfsServer,
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
    const names = Array.from({ length: claims }, (_, index) => `claim-${index}`);
    const ready = await nfsMountStats(guest, mountPoint);
    const provisionStart = performance.now();
    const boundClaims = await phase(names, 'Bound');
    const provisionMs = performance.now() - provisionStart;
    const bound = await nfsMountStats(guest, mountPoint);
    const deleteStart = performance.now();
    const deletedClaims = await phase(names, 'gone');
    const deleteMs = performance.now() - deleteStart;
    const deleted = await nfsMountStats(guest, mountPoint);
    await phase(['warm-up'], 'gone');
    return {
      implementation,
      provision: perClaim(ready, bound),
      delete: perClaim(bound, deleted),
      bound: boundClaims,
      deleted: deletedClaims,
      provisionMsPerClaim: Math.round(provisionMs / claims),
      deleteMsPerClaim: Math.round(deleteMs / claims),
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

function table(results: readonly ImplementationResult[]): string {
  const operations = new Set<string>();
  for (const result of results) {
    for (const name of [...Object.keys(result.provision), ...Object.keys(result.delete)]) {
      if (name !== 'total') operations.add(name);
    }
  }
  const rows = [
    [
      'NFS operations per claim',
      ...results.flatMap((r) => [`${r.implementation} provision`, `${r.implementation} delete`]),
    ],
  ];
  rows.push(['total', ...results.flatMap((r) => [String(r.provision.total), String(r.delete.total)])]);
  for (const name of [...operations].sort()) {
    rows.push([
      name,
      ...results.flatMap((r) => [String(r.provision[name] ?? 0), String(r.delete[name] ?? 0)]),
    ]);
  }
  rows.push([
    'ms per claim (UML)',
    ...results.flatMap((r) => [String(r.provisionMsPerClaim), String(r.deleteMsPerClaim)]),
  ]);
  const widths = rows[0]?.map((_, column) => Math.max(...rows.map((row) => row[column]?.length ?? 0))) ?? [];
  return rows
    .map((row) => row.map((cell, column) => cell.padStart(widths[column] ?? 0)).join('  '))
    .join('\n');
}

const cluster = await openBenchCluster(log);
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
  const results: ImplementationResult[] = [];
  results.push(
    await measure(
      cluster,
      guest,
      'ours',
      (env) => guest.spawn(['node', guest.guestPath(oursBundle), '--mount-root', mountPoint], { env }),
      endpoint.address,
    ),
  );
  if (values.upstream !== undefined) {
    const upstreamBinary = join(bin, 'nfs-subdir-external-provisioner');
    await copyFile(values.upstream, upstreamBinary);
    results.push(
      await measure(
        cluster,
        guest,
        'upstream',
        (env) => guest.spawn([guest.guestPath(upstreamBinary)], { env }),
        endpoint.address,
      ),
    );
  }
  await mount.unmount();
  process.stdout.write(`${table(results)}\n`);
  if (values.out !== undefined) {
    await mkdir(dirname(values.out), { recursive: true });
    await writeFile(values.out, `${JSON.stringify({ claims, results }, null, 2)}\n`);
  }
} finally {
  await guest.stop();
  await server.stop();
  await rm(exportDir, { recursive: true, force: true });
  await cluster.close();
}
