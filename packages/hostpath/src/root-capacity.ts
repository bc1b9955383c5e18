/**
 * How much a per-node root can still hold: its file system's size and free space (statfs), and the
 * space promised to enforced volumes (their capacities, whether or not they have filled it yet).
 * The scheduler reads it through `CSIStorageCapacity` (`capacity-publisher.ts`), and `provision`
 * reschedules a claim its node cannot hold.
 */
import { statfs as nodeStatfs } from 'node:fs/promises';
import type { OperationContext } from '@kube-provisioner/controller';
import type { VolumeLister } from '@kube-provisioner/controller/usage';
import type { VolumeRoot } from '@kube-provisioner/safe-fs';
import { listOwnedVolumes, type VolumeOwnerScope } from './owned-volumes.ts';

/** The root's file system, in bytes. */
export interface RootSpace {
  /** The size of the root's file system. */
  readonly capacityBytes: number;
  /** The bytes an unprivileged writer can still write (statfs `bavail`). */
  readonly freeBytes: number;
}

/** What a root holds and can hold, in bytes. */
export interface RootCapacity extends RootSpace {
  /** The capacities of the bound volumes whose size is enforced (a quota project in their record). */
  readonly reservedBytes: number;
  /** Bound volumes this instance owns on the root. */
  readonly volumes: number;
}

/** The part of `statfs` a capacity needs; `fs.promises.statfs` fits. */
export type StatFs = (path: string) => Promise<{ bsize: number; blocks: number; bavail: number }>;

/**
 * The bytes the next volume of a class can get: with enforced sizes the space not yet promised to
 * an enforced volume (what quotas will let them fill), otherwise the file system's free space.
 */
export function roomFor(capacity: RootSpace & Partial<RootCapacity>, enforced: boolean): number {
  return enforced ? Math.max(0, capacity.capacityBytes - (capacity.reservedBytes ?? 0)) : capacity.freeBytes;
}

/** Reads the {@link RootCapacity} of one per-node root. */
export class RootCapacityReader {
  readonly #root: Pick<VolumeRoot, 'base' | 'recordedVolumes'>;
  readonly #volumes: VolumeLister;
  readonly #scope: VolumeOwnerScope;
  readonly #statfs: StatFs;

  /** `volumes` lists the PVs (their capacities); `scope` says which of them are this root's. */
  constructor(
    root: Pick<VolumeRoot, 'base' | 'recordedVolumes'>,
    volumes: VolumeLister,
    scope: VolumeOwnerScope,
    statfs: StatFs = nodeStatfs,
  ) {
    this.#root = root;
    this.#volumes = volumes;
    this.#scope = scope;
    this.#statfs = statfs;
  }

  /** The root's file system now: one statfs. */
  async space(): Promise<RootSpace> {
    const stats = await this.#statfs(this.#root.base);
    return { capacityBytes: stats.blocks * stats.bsize, freeBytes: stats.bavail * stats.bsize };
  }

  /** The root's capacity now: one statfs, one PV list and one read of the records on the root. */
  async read(context: Pick<OperationContext, 'signal'>): Promise<RootCapacity> {
    const [space, owned, enforced] = await Promise.all([
      this.space(),
      listOwnedVolumes(this.#volumes, this.#scope, context),
      // Enforcement is a fact of the volume (its record's project), not of its class today.
      this.#root.recordedVolumes(
        (record) =>
          record.projectId !== undefined &&
          record.releasedAt === undefined &&
          record.archivedAt === undefined,
      ),
    ]);
    const enforcedPvs = new Set(enforced.map(({ record }) => record.pvName));
    let reservedBytes = 0;
    for (const volume of owned) {
      if (enforcedPvs.has(volume.pvName)) reservedBytes += volume.requestedBytes ?? 0;
    }
    return { ...space, reservedBytes, volumes: owned.length };
  }
}

/**
 * Why node `node` cannot hold a new volume of `requestBytes`, or `undefined` when it can: the
 * message of the reschedule, naming the node and its room.
 */
export function noRoomReason(
  capacity: RootSpace & Partial<RootCapacity>,
  node: string,
  requestBytes: number,
  enforced: boolean,
): string | undefined {
  const room = roomFor(capacity, enforced);
  if (room >= requestBytes) return undefined;
  const what = enforced ? 'unreserved by enforced volumes' : 'free';
  return `node ${node} has ${room} bytes ${what} on its root, less than the ${requestBytes} bytes requested: rescheduling the claim`;
}
