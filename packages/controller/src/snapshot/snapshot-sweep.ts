/**
 * The leader's retention sweep of `DirectorySnapshot`s: the bounds of a source claim's class
 * (`snapshotsPerClaim`, `snapshotRetention`; `snapshot-bounds.ts`) applied to the snapshots this
 * provisioner took of that claim, each expired one deleted through the API so that its data goes
 * the usual way (finalizer, `deletionPolicy`). Run for one claim when one of its snapshots becomes
 * ready, and for all now and then (age bounds need a clock, not an event).
 */
import { isNotFound } from '../client/api-error.ts';
import { isLeadershipLapsedError } from '../leader-election/lease-fence.ts';
import type { OperationContext } from '../provisioner.ts';
import { annSnapshotProvisioner, type DirectorySnapshot, snapshotGroup } from './directory-snapshot.ts';
import type { SnapshotAccess } from './snapshot-access.ts';
import {
  type ExpiredSnapshot,
  expiredSnapshots,
  parseSnapshotBounds,
  type SnapshotBounds,
} from './snapshot-bounds.ts';
import type { SnapshotMetrics } from './snapshot-metrics.ts';

/** `Normal` event on a `DirectorySnapshot` deleted by its class's `snapshotsPerClaim` or `snapshotRetention`. */
export const reasonSnapshotExpired = 'SnapshotExpired';

/**
 * Annotation recording the UID of the claim a snapshot was taken of: a claim deleted and made again
 * under its name is another claim, whose bounds do not reach its predecessor's snapshots.
 */
export const annSnapshotSourceClaimUid = 'snapshot.kube-provisioner.io/source-claim-uid';

/** What the sweep needs: the taker's access and who it is. */
export interface SnapshotSweepOptions extends SnapshotAccess {
  /** Only this provisioner's snapshots are swept. */
  readonly provisionerName: string;
  /** Where the expired snapshots are counted. */
  readonly metrics: SnapshotMetrics | undefined;
  /** Clock of the age bound. */
  readonly now: () => number;
}

/** A source claim, as its snapshots name it: namespace, claim name and claim UID. */
interface SourceClaim {
  readonly namespace: string;
  readonly claimName: string;
  readonly claimUid: string;
}

/** The snapshots of one source claim. */
interface ClaimSnapshots extends SourceClaim {
  readonly snapshots: Readonly<DirectorySnapshot>[];
}

/** The bounds of a source claim's class, with the class's name and parameters for the events. */
interface ClassBounds {
  readonly bounds: SnapshotBounds;
  readonly className: string;
  readonly parameters: Readonly<Record<string, string>>;
}

/** Deletes the snapshots their source claim's class bounds expire. */
export class SnapshotSweep {
  readonly #options: SnapshotSweepOptions;

  constructor(options: SnapshotSweepOptions) {
    this.#options = options;
  }

  /**
   * Sweeps the snapshots of every source claim. A claim whose bounds cannot be read (a failed read,
   * a malformed value) is skipped and logged, as is a snapshot whose delete fails; the others are swept.
   *
   * @throws a lapsed term's error, or a failed list.
   */
  async sweepAll(context: OperationContext): Promise<void> {
    if (this.#options.classes === undefined) return;
    for (const claim of this.#byClaim(await this.#list(undefined, context))) {
      await this.#sweepClaim(claim, async () => claim.snapshots, context);
    }
  }

  /**
   * Sweeps the snapshots of the claim `snapshot` was taken of; lists them only when its class sets
   * a bound.
   *
   * @throws a lapsed term's error, or a failed list.
   */
  async sweepSourceOf(snapshot: Readonly<DirectorySnapshot>, context: OperationContext): Promise<void> {
    const claim = claimOf(snapshot);
    if (claim === undefined) return;
    const key = claimKey(claim);
    const snapshotsOf = async (): Promise<Readonly<DirectorySnapshot>[]> => {
      const listed = await this.#list(claim.namespace, context);
      return this.#byClaim(listed).find((group) => claimKey(group) === key)?.snapshots ?? [];
    };
    await this.#sweepClaim(claim, snapshotsOf, context);
  }

  /** All snapshots, of one namespace or every one, page by page. */
  async #list(namespace: string | undefined, context: OperationContext): Promise<DirectorySnapshot[]> {
    const items: DirectorySnapshot[] = [];
    let next: string | undefined;
    do {
      const page = await this.#options.snapshots.list({
        ...(namespace === undefined ? {} : { namespace }),
        limit: 500,
        ...(next === undefined ? {} : { continue: next }),
        signal: context.signal,
      });
      items.push(...page.items);
      next = page.metadata.continue || undefined;
    } while (next !== undefined);
    return items;
  }

  /** This provisioner's snapshots with a recorded source claim UID, grouped by source claim. */
  #byClaim(snapshots: readonly Readonly<DirectorySnapshot>[]): ClaimSnapshots[] {
    const claims = new Map<string, ClaimSnapshots>();
    for (const snapshot of snapshots) {
      const claim = claimOf(snapshot);
      const owner = snapshot.metadata?.annotations?.[annSnapshotProvisioner];
      if (owner !== this.#options.provisionerName || claim === undefined) continue;
      const key = claimKey(claim);
      const group = claims.get(key) ?? { ...claim, snapshots: [] };
      group.snapshots.push(snapshot);
      claims.set(key, group);
    }
    return [...claims.values()];
  }

  async #sweepClaim(
    claim: SourceClaim,
    snapshotsOf: () => Promise<readonly Readonly<DirectorySnapshot>[]>,
    context: OperationContext,
  ): Promise<void> {
    const log = { namespace: claim.namespace, claim: claim.claimName };
    let bounds: ClassBounds | undefined;
    try {
      bounds = await this.#boundsOf(claim, context.signal);
    } catch (err) {
      if (isLeadershipLapsedError(err) || context.signal.aborted) throw err;
      context.logger.warn(
        { ...log, err },
        'could not read the snapshot bounds of a claim; its snapshots are kept',
      );
      return;
    }
    if (bounds === undefined) return;
    const snapshots = await snapshotsOf();
    for (const expired of expiredSnapshots(snapshots, bounds.bounds, this.#options.now())) {
      // One failed delete (replaced meanwhile, a hiccup) leaves that snapshot to the next sweep, not the others.
      await this.#expire(expired, bounds.className, bounds.parameters, context).catch((err: unknown) => {
        if (isLeadershipLapsedError(err) || context.signal.aborted) throw err;
        const name = expired.snapshot.metadata?.name;
        context.logger.warn({ ...log, snapshot: name, err }, 'could not delete an expired snapshot');
      });
    }
  }

  /**
   * The class bounds of a live source claim; `undefined` when the claim (this very one, by UID), its
   * PV or its class is gone, or the class sets no bound: such snapshots are kept until deleted by hand.
   *
   * @throws Error naming a malformed bound, or a failed read.
   */
  async #boundsOf(claim: SourceClaim, signal: AbortSignal): Promise<ClassBounds | undefined> {
    const { claims, volumes, classes } = this.#options;
    if (classes === undefined) return undefined;
    const found = await claims.get(claim.claimName, { namespace: claim.namespace, signal }).catch(absent);
    const volumeName = found?.spec?.volumeName ?? '';
    if (found?.metadata?.uid !== claim.claimUid || volumeName === '') return undefined;
    const pv = await volumes.get(volumeName, { signal }).catch(absent);
    const className = pv?.spec?.storageClassName ?? '';
    if (className === '') return undefined;
    const storageClass = await classes.get(className, { signal }).catch(absent);
    if (storageClass === undefined) return undefined;
    const { bounds, problems } = parseSnapshotBounds(storageClass.parameters);
    if (problems.length > 0) throw new Error(`StorageClass ${className}: ${problems.join('; ')}`);
    if (bounds.perClaim === undefined && bounds.retentionMs === undefined) return undefined;
    return { bounds, className, parameters: storageClass.parameters ?? {} };
  }

  /** Deletes one expired snapshot (this very object, by UID) and says why on it. */
  async #expire(
    { snapshot, bound }: ExpiredSnapshot,
    className: string,
    parameters: Readonly<Record<string, string>>,
    context: OperationContext,
  ): Promise<void> {
    const { name = '', namespace = '', uid = '' } = snapshot.metadata ?? {};
    context.assertLeader();
    try {
      await this.#options.snapshots.delete(name, {
        namespace,
        preconditions: { uid },
        signal: context.signal,
      });
    } catch (err) {
      if (isNotFound(err)) return;
      throw err;
    }
    const claim = `${namespace}/${snapshot.spec?.source?.persistentVolumeClaimName}`;
    const message =
      bound === 'snapshotsPerClaim'
        ? `deleted: claim ${claim} keeps its newest ${parameters[bound]} snapshots (snapshotsPerClaim of StorageClass ${className})`
        : `deleted: older than ${parameters[bound]} (snapshotRetention of StorageClass ${className})`;
    const object = { ...snapshot, apiVersion: `${snapshotGroup}/v1alpha1`, kind: 'DirectorySnapshot' };
    this.#options.events?.event(object, 'Normal', reasonSnapshotExpired, message);
    this.#options.metrics?.expired(bound);
    context.logger.info({ namespace, name, bound }, 'snapshot expired by its class bound');
  }
}

/** `undefined` for a missing object; rethrows anything else. */
function absent(err: unknown): undefined {
  if (isNotFound(err)) return undefined;
  throw err;
}

function claimKey(claim: SourceClaim): string {
  return JSON.stringify([claim.namespace, claim.claimName, claim.claimUid]);
}

/** The source claim of a snapshot that recorded its claim's UID; `undefined` otherwise. */
function claimOf(snapshot: Readonly<DirectorySnapshot>): SourceClaim | undefined {
  const claimUid = snapshot.metadata?.annotations?.[annSnapshotSourceClaimUid] ?? '';
  const claimName = snapshot.spec?.source?.persistentVolumeClaimName ?? '';
  if (claimUid === '' || claimName === '') return undefined;
  return { namespace: snapshot.metadata?.namespace ?? '', claimName, claimUid };
}
