/**
 * Clones in the background, as the Go library's `ProvisioningInBackground`: the first `provision`
 * of a claim with a PersistentVolumeClaim source protects the source and starts the copy, and every
 * call until it ends answers `Background` with the progress (the controller's event shows it). When
 * the copy ends the claim is requeued at once (`OperationContext.requeue`), so it binds without
 * waiting out the controller's back-off. At most {@link maxRunningClones} copies run at once; a
 * claim beyond that waits, and is requeued when a copy ends. A deleted target claim cancels its
 * copy; a failed or cancelled copy leaves nothing behind. The copy itself is the provisioner's
 * {@link CloneVolumes} (safe-fs's `VolumeRoot` fits).
 */
import type { V1PersistentVolume, V1PersistentVolumeClaim } from '@kubernetes/client-node';
import type { Registry } from 'prom-client';
import { isNotFound } from '../client/api-error.ts';
import type { ResourceClient } from '../client/resource-client.ts';
import type { ClaimDataSource, OperationContext } from '../provisioner.ts';
import { CloneMetrics } from './clone-metrics.ts';
import type { CloneProgress } from './clone-progress.ts';
import { type CloneSourceAccess, cloneSource, protectSource, releaseSource } from './clone-source.ts';

/** Copies running at once; more claims wait (the disk, not the CPU, bounds a copy). */
export const maxRunningClones = 2;

const claimCheckIntervalMs = 5000;

/** What {@link CloneJobs} adds to a copy's options: the source, cancellation, progress and the fence. */
export interface CloneCopyOptions {
  /** The source volume's PV. */
  readonly sourcePvName: string;
  readonly signal: AbortSignal;
  /** Called as the copy advances; its latest value is what the claim's event shows. */
  readonly onProgress: (progress: CloneProgress) => void;
  /** Throws once the term ended; called before each write. */
  readonly beforeEachWrite: () => void;
}

/**
 * Where volumes live, as far as cloning needs: make volume `path` a copy of volume `source`, and
 * remove a volume. `Path` is the provisioner's path type, `VolumeOptions` what else a new volume
 * needs (owner, modes…). safe-fs's `VolumeRoot` fits.
 */
export interface CloneVolumes<Path, VolumeOptions> {
  /** Creates volume `path` holding a copy of volume `source`; run again after a failure, it starts over. */
  cloneVolume(source: Path, path: Path, options: VolumeOptions & CloneCopyOptions): Promise<CloneProgress>;
  /**
   * Removes the empty volume `path` of a failed copy, only when its record names PV `pvName`
   * (`recordedOnly`): a directory without a record is one the copy refused to clone into (an
   * upstream provisioner's, or another namespace's under a flat pattern) and must stay as found.
   */
  deleteVolume(
    path: Path,
    options: { readonly pvName: string; readonly recordedOnly: true; readonly beforeEachWrite: () => void },
  ): Promise<unknown>;
}

/** One claim's clone. */
export interface CloneRequest<Path, VolumeOptions> {
  readonly pvc: Readonly<V1PersistentVolumeClaim>;
  readonly pvName: string;
  readonly path: Path;
  readonly dataSource: ClaimDataSource;
  /** What the new volume needs besides {@link CloneCopyOptions}: its owner, modes, special-file policy. */
  readonly volume: VolumeOptions;
  /**
   * Where the source PV's volume is. Throws (an `InfeasibleError` for a refusal) for a PV this
   * instance cannot reach: on another export, root or node.
   */
  readonly pathOf: (pv: Readonly<V1PersistentVolume>) => Path;
}

interface CloneJob {
  readonly source: { readonly namespace: string; readonly name: string };
  progress: CloneProgress;
  /** Set once the copy ended: `undefined` error for success. */
  ended: { readonly error: unknown } | undefined;
}

/** `ended` when the volume holds its copy; else why the claim must be called again. */
export type CloneStep = { readonly ended: true } | { readonly ended: false; readonly message: string };

function describe(progress: CloneProgress): string {
  const skipped = progress.skipped > 0 ? `, ${progress.skipped} special files skipped` : '';
  return `${progress.entries} entries, ${progress.bytes} bytes copied${skipped}`;
}

/** Options of {@link CloneJobs}. */
export interface CloneJobsOptions {
  /** How often a running copy checks that its claim still exists. Default 5 s. */
  readonly checkIntervalMs?: number | undefined;
  /** Where the clone metrics (`kube_provisioner_clone*`) are registered. Default: no metrics. */
  readonly registry?: Registry | undefined;
  /**
   * Where a running copy reads its own claim (`persistentvolumeclaims` `get`) to see that it still
   * exists. Default: the source access's `claims`, which are claims when the source is a claim. A
   * source of another kind (a snapshot adapter's `claims` answer with snapshots) must pass the
   * claims here, or every copy is cancelled at its first check.
   */
  readonly targetClaims?: Pick<ResourceClient<V1PersistentVolumeClaim>, 'get'> | undefined;
}

/** The background clones of one provisioner. */
export class CloneJobs<Path, VolumeOptions> {
  readonly #root: CloneVolumes<Path, VolumeOptions>;
  readonly #access: CloneSourceAccess;
  readonly #provisionerName: string;
  readonly #jobs = new Map<string, CloneJob>();
  /** Claims waiting for a free slot, oldest first: UID → how to requeue it. */
  readonly #waiting = new Map<string, () => void>();
  readonly #checkIntervalMs: number;
  readonly #targetClaims: Pick<ResourceClient<V1PersistentVolumeClaim>, 'get'>;
  readonly #metrics: CloneMetrics | undefined;

  constructor(
    root: CloneVolumes<Path, VolumeOptions>,
    access: CloneSourceAccess,
    provisionerName: string,
    options: CloneJobsOptions = {},
  ) {
    this.#root = root;
    this.#access = access;
    this.#provisionerName = provisionerName;
    this.#checkIntervalMs = options.checkIntervalMs ?? claimCheckIntervalMs;
    this.#targetClaims = options.targetClaims ?? access.claims;
    this.#metrics = options.registry && new CloneMetrics(options.registry);
  }

  /**
   * Advances the clone of `request.pvc`: starts it, reports its progress, or ends it.
   *
   * @throws the copy's error once (the next call starts over), or why the source cannot be cloned.
   */
  async step(request: CloneRequest<Path, VolumeOptions>, context: OperationContext): Promise<CloneStep> {
    const uid = request.pvc.metadata?.uid ?? '';
    const what = `cloning ${request.dataSource.namespace}/${request.dataSource.name} into ${String(request.path)}`;
    const job = this.#jobs.get(uid);
    if (job !== undefined && job.ended === undefined) {
      return { ended: false, message: `${what}: ${describe(job.progress)} so far` };
    }
    if (job?.ended !== undefined) {
      if (job.ended.error !== undefined) {
        this.#jobs.delete(uid);
        throw job.ended.error;
      }
      context.assertLeader();
      // Forgotten only once released: a failed release is retried, never the copy.
      await releaseSource(this.#access, job.source, context.signal);
      this.#jobs.delete(uid);
      context.logger.info({ path: request.path, progress: job.progress }, 'volume directory cloned');
      return { ended: true };
    }
    const running = [...this.#jobs.values()].filter((other) => other.ended === undefined).length;
    if (running >= maxRunningClones) {
      if (context.requeue !== undefined && !this.#waiting.has(uid)) this.#waiting.set(uid, context.requeue);
      return { ended: false, message: `${what}: waiting, ${running} clones are running` };
    }
    const source = await cloneSource(
      this.#access,
      request.dataSource,
      request.pvc,
      this.#provisionerName,
      context.signal,
    );
    const sourcePath = request.pathOf(source.pv);
    context.assertLeader();
    await protectSource(this.#access, source.pvc, context.signal);
    this.#start(uid, request, sourcePath, source.pv.metadata?.name ?? '', context);
    return { ended: false, message: `${what}: started` };
  }

  #start(
    uid: string,
    request: CloneRequest<Path, VolumeOptions>,
    sourcePath: Path,
    sourcePvName: string,
    context: OperationContext,
  ): void {
    const { namespace, name } = request.dataSource;
    this.#waiting.delete(uid);
    const job: CloneJob = {
      source: { namespace, name },
      progress: { entries: 0, bytes: 0, skipped: 0 },
      ended: undefined,
    };
    this.#jobs.set(uid, job);
    const abort = new AbortController();
    const watch = setInterval(() => void this.#cancelIfDeleted(request.pvc, abort), this.#checkIntervalMs);
    watch.unref();
    const fence = () => context.assertLeader();
    const metrics = this.#metrics;
    // The claim and a waiting one are synced again when the copy ends, not after their back-off.
    const ended = (): void => {
      if (!abort.signal.aborted) context.requeue?.();
      this.#wakeWaiting();
    };
    metrics?.started();
    const advance = (progress: CloneProgress): void => {
      metrics?.advanced(job.progress, progress);
      job.progress = progress;
    };
    this.#root
      .cloneVolume(sourcePath, request.path, {
        ...request.volume,
        sourcePvName,
        signal: abort.signal,
        onProgress: advance,
        beforeEachWrite: fence,
      })
      .then(
        (progress) => {
          advance(progress);
          metrics?.ended('succeeded');
          job.ended = { error: undefined };
          context.logger.info({ path: request.path, progress }, 'clone copy finished');
          ended();
        },
        async (error: unknown) => {
          // Nothing half-made stays: the empty volume this claim's record names goes (never a
          // directory the copy refused), and the source is free again even if that removal failed.
          const cleanup = { pvName: request.pvName, recordedOnly: true, beforeEachWrite: fence } as const;
          await this.#root
            .deleteVolume(request.path, cleanup)
            .catch((err: unknown) =>
              context.logger.warn({ err }, 'could not remove the volume of a failed clone'),
            )
            .then(fence)
            .then(() => releaseSource(this.#access, job.source, AbortSignal.timeout(30_000)))
            .catch((err: unknown) =>
              context.logger.warn({ err }, 'could not release the source of a failed clone'),
            );
          context.logger.warn({ path: request.path, err: error }, 'clone failed');
          metrics?.ended(abort.signal.aborted ? 'cancelled' : 'failed');
          if (abort.signal.aborted) this.#jobs.delete(uid);
          else job.ended = { error };
          ended();
        },
      )
      .finally(() => clearInterval(watch));
  }

  /** Requeues the claim that has waited longest for a slot, now that a copy ended. */
  #wakeWaiting(): void {
    const [oldest] = this.#waiting;
    if (oldest === undefined) return;
    this.#waiting.delete(oldest[0]);
    oldest[1]();
  }

  /** Aborts the copy when its claim is gone (deleted, or replaced by one of the same name). */
  async #cancelIfDeleted(pvc: Readonly<V1PersistentVolumeClaim>, abort: AbortController): Promise<void> {
    const { name = '', namespace = '', uid } = pvc.metadata ?? {};
    try {
      const current = await this.#targetClaims.get(name, { namespace, signal: AbortSignal.timeout(10_000) });
      if (current.metadata?.uid === uid && current.metadata?.deletionTimestamp === undefined) return;
    } catch (err) {
      if (!isNotFound(err)) return;
    }
    abort.abort(new Error(`claim ${namespace}/${name} was deleted; its clone is cancelled`));
  }
}
