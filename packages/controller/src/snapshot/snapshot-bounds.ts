/**
 * How many `DirectorySnapshot`s a claim keeps and for how long: two StorageClass parameters of the
 * source claim's class, `snapshotsPerClaim` and `snapshotRetention`, read by every provisioner that
 * takes snapshots, and the rule that picks which of a claim's snapshots they expire.
 */
import { parseGoDuration } from '../cli/go-syntax.ts';
import { finalizerCloningProtection } from '../clone/clone-source.ts';
import type { DirectorySnapshot } from './directory-snapshot.ts';

/** The class parameters that bound a claim's snapshots. */
export type SnapshotBoundName = 'snapshotsPerClaim' | 'snapshotRetention';

/** The bounds a class sets; either unset: no bound of that kind. */
export interface SnapshotBounds {
  /** At most this many ready snapshots per source claim (`snapshotsPerClaim`): the oldest go. */
  readonly perClaim?: number | undefined;
  /** Ready snapshots older than this, in ms, go (`snapshotRetention`, a Go duration). */
  readonly retentionMs?: number | undefined;
}

/** The parameter names, for a provisioner's list of the parameters it accepts. */
export const snapshotBoundNames: readonly SnapshotBoundName[] = ['snapshotsPerClaim', 'snapshotRetention'];

const accepted: Readonly<Record<SnapshotBoundName, string>> = {
  snapshotsPerClaim: 'a whole number of snapshots from 1, such as 5',
  snapshotRetention: 'a positive Go duration such as 720h',
};

/** Whether `key` is one of the {@link snapshotBoundNames}. */
export function isSnapshotBoundName(key: string): key is SnapshotBoundName {
  return Object.hasOwn(accepted, key);
}

/**
 * The bounds `parameters` set, other keys ignored, and a message per malformed value (in the words
 * of the provisioners' other parameter errors).
 */
export function parseSnapshotBounds(parameters: Readonly<Record<string, string>> | undefined): {
  readonly bounds: SnapshotBounds;
  readonly problems: readonly string[];
} {
  const problems: string[] = [];
  let perClaim: number | undefined;
  let retentionMs: number | undefined;
  const invalid = (name: SnapshotBoundName, value: string): void => {
    problems.push(
      `invalid value ${JSON.stringify(value)} for parameter "${name}": accepted values: ${accepted[name]}`,
    );
  };
  const count = parameters?.snapshotsPerClaim;
  if (count !== undefined) {
    if (/^[1-9][0-9]{0,5}$/u.test(count)) perClaim = Number(count);
    else invalid('snapshotsPerClaim', count);
  }
  const retention = parameters?.snapshotRetention;
  if (retention !== undefined) {
    const ms = parseGoDuration(retention);
    if (ms === undefined || ms <= 0) invalid('snapshotRetention', retention);
    else retentionMs = ms;
  }
  return { bounds: { perClaim, retentionMs }, problems };
}

/** One snapshot a bound expires, and which bound. */
export interface ExpiredSnapshot {
  readonly snapshot: Readonly<DirectorySnapshot>;
  readonly bound: SnapshotBoundName;
}

/**
 * Which of one claim's `snapshots` `bounds` expire at `nowMs`. Only ready snapshots with a
 * `creationTime`, not being deleted, count; the newest `perClaim` of them are kept, and of the others
 * and those older than `retentionMs` all go but those a restore still copies from (its
 * cloning-protection finalizer): they count, and a later sweep takes them.
 */
export function expiredSnapshots(
  snapshots: readonly Readonly<DirectorySnapshot>[],
  bounds: SnapshotBounds,
  nowMs: number,
): ExpiredSnapshot[] {
  const counted = snapshots
    .map((snapshot) => ({ snapshot, created: Date.parse(snapshot.status?.creationTime ?? '') }))
    .filter(
      ({ snapshot, created }) =>
        snapshot.status?.readyToUse === true &&
        snapshot.metadata?.deletionTimestamp === undefined &&
        Number.isFinite(created),
    )
    .sort((a, b) => b.created - a.created);
  const expired: ExpiredSnapshot[] = [];
  counted.forEach(({ snapshot, created }, index) => {
    if (snapshot.metadata?.finalizers?.includes(finalizerCloningProtection)) return;
    if (bounds.perClaim !== undefined && index >= bounds.perClaim) {
      expired.push({ snapshot, bound: 'snapshotsPerClaim' });
    } else if (bounds.retentionMs !== undefined && created < nowMs - bounds.retentionMs) {
      expired.push({ snapshot, bound: 'snapshotRetention' });
    }
  });
  return expired;
}
