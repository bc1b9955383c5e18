/**
 * Taking data back for a claim: it names, by an annotation, the PV of a volume whose class retained
 * its data (`onDelete: retain`), and the new volume gets that directory, renamed into place on the
 * same root. Retained data never leaves its root, so in per-node mode it is only found by the
 * instance of the node that held it.
 */
import { InfeasibleError, type OperationContext } from '@kube-provisioner/controller';
import type { EventRecorder } from '@kube-provisioner/controller/events';
import {
  joinBasePath,
  type OwnershipRecord,
  type RelativeVolumePath,
  type TakeBackOptions,
  type VolumeRoot,
} from '@kube-provisioner/safe-fs';
import type { V1PersistentVolumeClaim } from '@kubernetes/client-node';
import type { SizeEnforcement } from './size-enforcement.ts';
import type { ProjectLimits } from './xfs-quota.ts';

/**
 * Claim annotation naming the PV whose retained data the new volume takes back. The suffix is the
 * NFS provisioners' (`nfs.kube-provisioner.io/take-back-from`); the prefix names the provisioner
 * that reads it, as for every claim annotation.
 */
export const annTakeBackFrom = 'hostpath.kube-provisioner.io/take-back-from';

// A PV name is a DNS subdomain.
const pvNamePattern = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/u;

/**
 * The PV named by the claim's {@link annTakeBackFrom}, or `undefined` when the claim asks for an
 * empty volume.
 *
 * @throws InfeasibleError when the value is not a PV name, or names the claim's own new PV.
 */
export function requestedTakeBack(
  pvc: Readonly<V1PersistentVolumeClaim>,
  pvName: string,
): string | undefined {
  const from = pvc.metadata?.annotations?.[annTakeBackFrom];
  if (from !== undefined && (from === pvName || !pvNamePattern.test(from))) {
    throw new InfeasibleError(
      `annotation ${annTakeBackFrom} must name the PersistentVolume whose retained data this claim takes back, not ${JSON.stringify(from)}`,
    );
  }
  return from;
}

/**
 * What this root holds of the data to take back: nothing (`missing`), only data the claim cannot
 * take (`unavailable`: another namespace's, or still in use; the take-back refuses it with the
 * reason), or the data and its quota project, if its size was enforced (`recorded`).
 */
export type TakeBackSource =
  | { readonly kind: 'missing' | 'unavailable' }
  | { readonly kind: 'recorded'; readonly projectId: number | undefined };

/**
 * Looks for the data of PV `fromPvName` on `root`: the retained directory itself, or one an
 * interrupted take-back of the claim already reserved or moved. Only records the claim may take
 * are read for their project, so no refusal says anything of another namespace's data first.
 */
export async function findTakeBackSource(
  root: VolumeRoot,
  options: Pick<TakeBackOptions, 'fromPvName' | 'fromNamespaces' | 'owner'>,
): Promise<TakeBackSource> {
  const { fromPvName, fromNamespaces, owner } = options;
  const ours = (record: OwnershipRecord): boolean =>
    record.takenFrom === fromPvName && record.claimUid === owner.claimUid;
  // A record with `takenFrom` is a take-back only while live: archived or released, it holds its own PV's data.
  const kept = (record: OwnershipRecord): boolean =>
    record.takenFrom === undefined || record.releasedAt !== undefined || record.archivedAt !== undefined;
  const found = await root.recordedVolumes(
    (record) => ours(record) || (record.pvName === fromPvName && kept(record)),
    4,
  );
  if (found.length === 0) return { kind: 'missing' };
  const allowed = (record: OwnershipRecord): boolean =>
    ours(record) ||
    ((record.releasedAt !== undefined || record.archivedAt !== undefined) &&
      (record.namespace === owner.namespace ||
        fromNamespaces === '*' ||
        (fromNamespaces?.includes(record.namespace) ?? false)));
  // An interrupted take-back's records hold the project it chose; they win over the original.
  const records = found.map(({ record }) => record).filter(allowed);
  const record = records.find(ours) ?? records[0];
  return record === undefined ? { kind: 'unavailable' } : { kind: 'recorded', projectId: record.projectId };
}

/**
 * Refuses a take-back whose data and class disagree about enforced sizes: an enforced tree keeps its
 * project, which a class without `enforceSize` would leave unlimited, and a tree that never was a
 * project would not be counted by a new one (only new files inherit a project).
 */
function checkEnforcement(source: TakeBackSource, enforceSize: boolean, fromPvName: string): void {
  if (source.kind !== 'recorded') return;
  if (source.projectId !== undefined && !enforceSize) {
    throw new InfeasibleError(
      `the data of ${fromPvName} had its size enforced; take it back with a StorageClass that sets "enforceSize": "true"`,
    );
  }
  if (source.projectId === undefined && enforceSize) {
    throw new InfeasibleError(
      `the data of ${fromPvName} had no enforced size, so its files are in no quota project; take it back with a StorageClass without "enforceSize"`,
    );
  }
}

/** Event reason on the claim when it took back retained data: nfs-subdir's. */
export const reasonTakenBack = 'VolumeTakenBack';

/** Event reason on the claim when its take-back could not complete and gave the data back: nfs-subdir's. */
export const reasonTakeBackReleased = 'TakeBackReleased';

/** One take-back: where, from which PV, and the limits when the class enforces sizes. */
export interface TakeBackInto {
  /** The claim, which gets a `Normal` {@link reasonTakenBack} event when the data became its volume. */
  readonly pvc: Readonly<V1PersistentVolumeClaim>;
  readonly relative: RelativeVolumePath;
  readonly request: Omit<TakeBackOptions, 'beforeEachWrite'>;
  /** The new volume's project limits; `undefined` when its class does not enforce sizes. */
  readonly limits: ProjectLimits | undefined;
  /** The node whose root this is, in per-node mode; named when the data is not on it. */
  readonly node: string | undefined;
}

/**
 * Moves the retained data of `request.fromPvName` into volume `relative`, every write fenced. An
 * enforced tree keeps its project ID (recorded before the move, as for a new volume), and its limit
 * becomes the new request. The claim gets an event when its data is moved.
 */
export async function takeBackInto(
  root: VolumeRoot,
  sizes: SizeEnforcement,
  { pvc, relative, request, limits, node }: TakeBackInto,
  context: OperationContext,
  events: Pick<EventRecorder, 'event'> | undefined,
): Promise<void> {
  const { fromPvName } = request;
  const source = await findTakeBackSource(root, request);
  if (source.kind === 'missing' && node !== undefined) {
    // A plain error, retried: the old PV's delete may not have run yet.
    throw new Error(
      `no retained data of ${fromPvName} is on node ${node}: retained data stays on the node that held it, so the claim's pod must run on that node (or the PV is not deleted yet)`,
    );
  }
  checkEnforcement(source, limits !== undefined, fromPvName);
  // Before anything moves: a root that cannot enforce sizes any more takes nothing back.
  const quotas = limits === undefined ? undefined : await sizes.quotas();
  const projectId = source.kind === 'recorded' ? source.projectId : undefined;
  const owner = { ...request.owner, ...(projectId === undefined ? {} : { projectId }) };
  context.assertLeader();
  const claim = { apiVersion: 'v1', kind: 'PersistentVolumeClaim', ...pvc };
  const { outcome, from } = await root.takeBackVolume(relative, {
    ...request,
    owner,
    beforeEachWrite: () => context.assertLeader(),
    onReleased: (message) => events?.event(claim, 'Warning', reasonTakeBackReleased, message),
  });
  context.assertLeader();
  context.logger.info({ path: relative, outcome, from, fromPvName }, 'volume directory ready');
  // Said by the call that moved the data; a retry that finds it in place already did.
  if (outcome === 'taken-back') {
    const message = `took back the data of PersistentVolume ${fromPvName} into ${relative}`;
    events?.event(claim, 'Normal', reasonTakenBack, message);
  }
  if (quotas !== undefined && limits !== undefined) {
    await sizes.enforce(relative, joinBasePath(root.base, relative), quotas, limits, context);
  }
}
