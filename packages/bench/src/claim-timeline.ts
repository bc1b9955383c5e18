/**
 * When each claim of a run, and its PV, was created, bound and deleted, as seen by one watcher in the
 * bench process. Both ends of a latency come from the same clock and the same kind of observation
 * (a watch event arriving), so the figure is fair to the millisecond, unlike the API objects'
 * second-granular creationTimestamps.
 */
import type { V1PersistentVolume, V1PersistentVolumeClaim } from '@kubernetes/client-node';

/**
 * The annotations naming a claim's provisioner (GA, then beta). The provisioner acts on a claim only
 * once one is set, so claim seen → annotated is the PV controller's share of the latency.
 */
export const provisionerAnnotations: readonly string[] = [
  'volume.kubernetes.io/storage-provisioner',
  'volume.beta.kubernetes.io/storage-provisioner',
];

/** Milliseconds on the bench's monotonic clock (`performance.now()`). */
type Instant = number;

interface ClaimRecord {
  added?: Instant;
  /** First seen with the storage-provisioner annotation, which kube-controller-manager's PV controller sets. */
  annotated?: Instant;
  bound?: Instant;
  volumeAdded?: Instant;
  volumeDeleted?: Instant;
}

/** How many claims reached each stage. */
export interface TimelineCounts {
  readonly claimsAdded: number;
  readonly claimsAnnotated: number;
  readonly claimsBound: number;
  readonly volumesAdded: number;
  readonly volumesDeleted: number;
}

/** One claim's latency and the moment (`performance.now()`) it started. */
export interface LatencyPoint {
  readonly at: Instant;
  readonly latencyMs: number;
}

/** A watch event as the timeline needs it. */
export type TimelineEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

interface Waiter {
  readonly predicate: (counts: TimelineCounts) => boolean;
  readonly resolve: () => void;
}

/** Records claim and PV watch events of one namespace. */
export class ClaimTimeline {
  readonly #namespace: string;
  readonly #claims = new Map<string, ClaimRecord>();
  readonly #waiters = new Set<Waiter>();
  #counts: TimelineCounts = {
    claimsAdded: 0,
    claimsAnnotated: 0,
    claimsBound: 0,
    volumesAdded: 0,
    volumesDeleted: 0,
  };
  #lastAnnotated: Instant | undefined;
  #lastBound: Instant | undefined;
  #lastVolumeAdded: Instant | undefined;
  #lastVolumeDeleted: Instant | undefined;

  /** Follows the claims of `namespace` and the PVs bound to them. */
  constructor(namespace: string) {
    this.#namespace = namespace;
  }

  /** Stage counts so far. */
  get counts(): TimelineCounts {
    return this.#counts;
  }

  /** When the last claim was first seen with the storage-provisioner annotation. */
  get lastAnnotated(): Instant | undefined {
    return this.#lastAnnotated;
  }

  /** When the last claim was first seen Bound. */
  get lastBound(): Instant | undefined {
    return this.#lastBound;
  }

  /** When the last PV was first seen. */
  get lastVolumeAdded(): Instant | undefined {
    return this.#lastVolumeAdded;
  }

  /** When the last PV was seen deleted. */
  get lastVolumeDeleted(): Instant | undefined {
    return this.#lastVolumeDeleted;
  }

  /** Records a claim watch event seen `at`. */
  recordClaim(type: TimelineEventType, claim: V1PersistentVolumeClaim, at: Instant): void {
    const uid = claim.metadata?.uid;
    if (uid === undefined || claim.metadata?.namespace !== this.#namespace || type === 'DELETED') return;
    const record = this.#record(uid);
    if (record.added === undefined) {
      record.added = at;
      this.#bump('claimsAdded');
    }
    const annotations = claim.metadata?.annotations ?? {};
    if (record.annotated === undefined && provisionerAnnotations.some((key) => key in annotations)) {
      record.annotated = at;
      this.#lastAnnotated = at;
      this.#bump('claimsAnnotated');
    }
    if (record.bound === undefined && claim.status?.phase === 'Bound') {
      record.bound = at;
      this.#lastBound = at;
      this.#bump('claimsBound');
    }
    this.#settle();
  }

  /** Records a PV watch event seen `at`; PVs of other namespaces' claims are ignored. */
  recordVolume(type: TimelineEventType, volume: V1PersistentVolume, at: Instant): void {
    const ref = volume.spec?.claimRef;
    if (ref?.uid === undefined || ref.namespace !== this.#namespace) return;
    const record = this.#record(ref.uid);
    if (record.volumeAdded === undefined && type !== 'DELETED') {
      record.volumeAdded = at;
      this.#lastVolumeAdded = at;
      this.#bump('volumesAdded');
    }
    if (record.volumeDeleted === undefined && type === 'DELETED') {
      record.volumeDeleted = at;
      this.#lastVolumeDeleted = at;
      this.#bump('volumesDeleted');
    }
    this.#settle();
  }

  /** Claim seen (`from: 'added'`) or seen annotated (`'annotated'`) → its PV seen, in ms, for every claim that has both. */
  latencies(from: 'added' | 'annotated' = 'added'): number[] {
    const latencies: number[] = [];
    for (const record of this.#claims.values()) {
      const start = record[from];
      if (start !== undefined && record.volumeAdded !== undefined) latencies.push(record.volumeAdded - start);
    }
    return latencies;
  }

  /** Per claim with both: when it was seen (`from`), and how long until its PV; ordered by that moment. */
  latencyPoints(from: 'added' | 'annotated' = 'added'): LatencyPoint[] {
    const points: LatencyPoint[] = [];
    for (const record of this.#claims.values()) {
      const start = record[from];
      if (start !== undefined && record.volumeAdded !== undefined) {
        points.push({ at: start, latencyMs: record.volumeAdded - start });
      }
    }
    return points.sort((a, b) => a.at - b.at);
  }

  /** Resolves once `predicate` holds for the counts; rejects when `signal` aborts first. */
  until(predicate: (counts: TimelineCounts) => boolean, signal: AbortSignal): Promise<void> {
    if (predicate(this.#counts)) return Promise.resolve();
    signal.throwIfAborted();
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        predicate,
        resolve: () => {
          signal.removeEventListener('abort', onAbort);
          resolve();
        },
      };
      const onAbort = (): void => {
        this.#waiters.delete(waiter);
        reject(signal.reason);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.#waiters.add(waiter);
    });
  }

  #record(uid: string): ClaimRecord {
    let record = this.#claims.get(uid);
    if (record === undefined) {
      record = {};
      this.#claims.set(uid, record);
    }
    return record;
  }

  #bump(stage: keyof TimelineCounts): void {
    this.#counts = { ...this.#counts, [stage]: this.#counts[stage] + 1 };
  }

  #settle(): void {
    for (const waiter of this.#waiters) {
      if (!waiter.predicate(this.#counts)) continue;
      this.#waiters.delete(waiter);
      waiter.resolve();
    }
  }
}
