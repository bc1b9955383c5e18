/**
 * The snapshot phase, where the target takes `DirectorySnapshot`s: source claims are bound and filled
 * with thousands of files written straight into their directories on the root, then left alone (the
 * sources are quiescent); a snapshot of each is created and the leader SIGKILLed as soon as a copy is
 * seen in the snapshot area. Every snapshot must become ready, those the kill cut short finished by
 * a later leader, each holding exactly its source's files and contents, with nothing else left in
 * the area, and the audit must list them. The sources are deleted; a claim restores each snapshot
 * (`dataSourceRef`) while the leader is SIGKILLed as soon as a restore copy is seen on the root. Every
 * restore must be Bound with exactly the source's content and leave no copy behind. Then the
 * snapshots are deleted: their data must go, and the audit must be clean.
 */
import type { AuditReport } from '@kube-provisioner/audit';
import { ClaimFleet, type FleetClaim, newClaim } from './claim-fleet.ts';
import { DirectorySnapshots, type SnapshotObject } from './directory-snapshots.ts';
import { holdsWithin } from './holds-within.ts';
import { type AimedFault, killLeaderWhen } from './leader-faults.ts';
import type { PhaseContext } from './phase-context.ts';
import { settledAudit } from './settled-audit.ts';
import {
  snapshotCopiesInProgress,
  snapshotCopyName,
  snapshotDataDir,
  snapshotLeftovers,
} from './snapshot-area.ts';
import { clonesInProgress, digestDifferences, treeDigest, writeTree } from './volume-files.ts';

/** external-provisioner's finalizer, which a snapshot carries while a restore copies from it. */
const cloningProtection = 'provisioner.storage.kubernetes.io/cloning-protection';

/** What the snapshot phase found. */
export interface SnapshotResult {
  readonly target: string;
  readonly snapshots: number;
  readonly filesPerSource: number;
  /** Sources and restoring claims never Bound. */
  readonly notBound: readonly string[];
  /** Snapshots never ready to use, with their last error. */
  readonly notReady: readonly string[];
  /** Snapshots whose copy the kill cut short and whose `creationTime` is not after the kill. */
  readonly notFinishedAfterKill: readonly string[];
  /** Snapshots and restores whose tree differs from the source's: `name: path missing|extra|differs`. */
  readonly notIdentical: readonly string[];
  /** What the snapshot area held besides the finished snapshots and their records, once ready and after the restores. */
  readonly leftInArea: readonly string[];
  /** Restore copy directories left on the root once every restore was Bound. */
  readonly copiesLeft: readonly string[];
  /** Snapshots still carrying the cloning-protection finalizer once every restore was Bound. */
  readonly stillProtected: readonly string[];
  /** Snapshots the audit did not list as live and ready with their source, or still listed once deleted. */
  readonly notListed: readonly string[];
  /** Snapshot objects, data directories or area entries left once the snapshots were deleted. */
  readonly dataLeft: readonly string[];
  /** PVs of the phase left after its claims were deleted. */
  readonly lostDeletes: readonly string[];
  /** The kill aimed at a snapshot copy, and the copies it cut short (`.<uid>.kube-provisioner.copy`). */
  readonly snapshotKill: AimedFault | undefined;
  readonly cutCopies: readonly string[];
  /** The kill aimed at a restore copy. */
  readonly restoreKill: AimedFault | undefined;
  /** The audit with every snapshot ready, and once everything of the phase is gone. */
  readonly auditReady: AuditReport | undefined;
  readonly audit: AuditReport | undefined;
}

/** Where and how the phase runs. */
export interface SnapshotOptions extends PhaseContext {
  readonly namespace: string;
  /** Snapshots, one per source, each restored once. */
  readonly snapshots: number;
  readonly filesPerSource: number;
}

const pad = (i: number): string => String(i).padStart(3, '0');

/** Runs the phase on `options.target`. */
export async function runSnapshotUnderKill(options: SnapshotOptions): Promise<SnapshotResult> {
  const { target, namespace, waitMs } = options;
  if (!target.snapshots) throw new Error(`${target.name} takes no snapshots`);
  const storageClass = target.classes.delete ?? '';
  const sources = Array.from({ length: options.snapshots }, (_, i) =>
    newClaim(`source-${pad(i)}`, storageClass),
  );
  const snapshotOf = new Map(sources.map((source, i) => [`snap-${pad(i)}`, source]));
  const restores = [...snapshotOf.keys()].map((snapshot, i) =>
    newClaim(`restore-${pad(i)}`, storageClass, { restoreFrom: snapshot }),
  );
  const fleet = new ClaimFleet(options.kubeConfig, namespace, [...sources, ...restores]);
  const snapshots = new DirectorySnapshots(options.kubeConfig, namespace);
  const allBound = (claims: readonly FleetClaim[]) => async () => {
    await fleet.observe();
    return claims.every((c) => c.volumeName !== undefined);
  };

  await fleet.create(sources);
  await holdsWithin(allBound(sources), waitMs, 'every source of the snapshot phase to be Bound');
  const digests = new Map<string, Map<string, string>>();
  const volumes = await fleet.volumes();
  for (const source of sources) {
    const pv = volumes.get(source.volumeName ?? '');
    if (pv === undefined || source.uid === undefined) continue;
    await writeTree(target.volumeDir(pv), options.filesPerSource, source.uid);
    digests.set(source.name, await treeDigest(target.volumeDir(pv)));
  }

  let cutCopies: string[] = [];
  const copying = async (): Promise<boolean> => {
    cutCopies = await snapshotCopiesInProgress(target.root, namespace);
    return cutCopies.length > 0;
  };
  const [snapshotKill] = await Promise.all([
    killLeaderWhen(copying, {
      replicas: target.replicas,
      lease: options.lease,
      phase: 'snapshot',
      timeoutMs: waitMs,
    }),
    (async () => {
      for (const [name, source] of snapshotOf) await snapshots.create(name, source.name);
    })(),
  ]);
  let taken = new Map<string, SnapshotObject>();
  const allReady = async (): Promise<boolean> => {
    taken = await snapshots.list();
    return [...snapshotOf.keys()].every((name) => taken.get(name)?.status?.readyToUse === true);
  };
  await holdsWithin(allReady, waitMs, 'every snapshot to be ready');
  const uidOf = (name: string): string => taken.get(name)?.metadata?.uid ?? '';
  const readyUids = [...snapshotOf.keys()]
    .filter((name) => taken.get(name)?.status?.readyToUse === true)
    .map(uidOf);

  const notReady: string[] = [];
  const notFinishedAfterKill: string[] = [];
  const notIdentical: string[] = [];
  const compare = async (name: string, source: FleetClaim, dir: string): Promise<void> => {
    const expected = digests.get(source.name);
    if (expected === undefined) return;
    const differences = digestDifferences(expected, await treeDigest(dir).catch(() => new Map()));
    notIdentical.push(...differences.slice(0, 5).map((difference) => `${name}: ${difference}`));
  };
  for (const [name, source] of snapshotOf) {
    const snapshot = taken.get(name);
    if (snapshot?.status?.readyToUse !== true) {
      notReady.push(`${name}: ${snapshot?.status?.error?.message ?? 'no error reported'}`);
      continue;
    }
    const uid = uidOf(name);
    const finishedAt = Date.parse(snapshot.status.creationTime ?? '');
    const killedAt = snapshotKill.fault.atMs;
    if (cutCopies.includes(snapshotCopyName(uid)) && !(finishedAt > killedAt))
      notFinishedAfterKill.push(
        `${name}: ready at ${snapshot.status.creationTime}, killed at ${new Date(killedAt).toISOString()}`,
      );
    await compare(name, source, snapshotDataDir(target.root, namespace, uid));
  }
  const leftInArea = await snapshotLeftovers(target.root, namespace, readyUids);
  const auditReady = await settledAudit(options.api, target);
  const notListed: string[] = [];
  for (const [name, source] of snapshotOf) {
    const listed = auditReady.snapshots.find((s) => s.namespace === namespace && s.uid === uidOf(name));
    if (listed?.state !== 'live' || listed.readyToUse !== true || listed.source !== source.name)
      notListed.push(`${name}: listed as ${JSON.stringify(listed ?? 'nothing')}`);
  }

  // Restored from the snapshot alone: its source claims are gone first.
  await fleet.delete(sources);
  const lostSources = await fleet.volumesLeft(sources, waitMs);
  const [restoreKill] = await Promise.all([
    killLeaderWhen(async () => (await clonesInProgress(target.root)).length > 0, {
      replicas: target.replicas,
      lease: options.lease,
      phase: 'restore',
      timeoutMs: waitMs,
    }),
    fleet.create(restores),
  ]);
  await holdsWithin(allBound(restores), waitMs, 'every restoring claim to be Bound');
  const restoredVolumes = await fleet.volumes();
  for (const restore of restores) {
    const pv = restoredVolumes.get(restore.volumeName ?? '');
    const source = snapshotOf.get(restore.restoreFrom ?? '');
    if (pv !== undefined && source !== undefined) await compare(restore.name, source, target.volumeDir(pv));
  }
  const copiesLeft = await clonesInProgress(target.root);
  leftInArea.push(
    ...(await snapshotLeftovers(target.root, namespace, readyUids)).map(
      (name) => `after the restores: ${name}`,
    ),
  );
  const protectedSnapshots = async (): Promise<string[]> => {
    const live = await snapshots.list();
    return [...snapshotOf.keys()].filter(
      (name) => live.get(name)?.metadata?.finalizers?.includes(cloningProtection) === true,
    );
  };
  // The finalizer goes in the restore's own provisioning call, which may end just after the binding.
  await holdsWithin(
    async () => (await protectedSnapshots()).length === 0,
    waitMs,
    'the snapshots to lose their cloning-protection finalizer',
  );
  const stillProtected = await protectedSnapshots();

  await fleet.delete(restores);
  for (const name of snapshotOf.keys()) await snapshots.delete(name);
  await holdsWithin(
    async () => (await snapshots.list()).size === 0,
    waitMs,
    'the deleted snapshots to be gone',
  );
  const dataLeft = [
    ...[...(await snapshots.list()).keys()].map((name) => `object ${name} remains`),
    ...(await snapshotLeftovers(target.root, namespace, [])),
  ];
  const lostDeletes = [...lostSources, ...(await fleet.volumesLeft(restores, waitMs))];
  const audit = await settledAudit(options.api, target);
  notListed.push(
    ...audit.snapshots
      .filter((s) => s.namespace === namespace)
      .map((s) => `${s.name}: still listed (${s.state})`),
  );
  return {
    target: target.name,
    snapshots: snapshotOf.size,
    filesPerSource: options.filesPerSource,
    notBound: [...sources, ...restores].filter((c) => c.volumeName === undefined).map((c) => c.name),
    notReady,
    notFinishedAfterKill,
    notIdentical,
    leftInArea,
    copiesLeft,
    stillProtected,
    notListed,
    dataLeft,
    lostDeletes,
    snapshotKill,
    cutCopies,
    restoreKill,
    auditReady,
    audit,
  };
}
