/**
 * Clones in the background, as the Go library's `ProvisioningInBackground`: the first `provision`
 * of a claim with a PersistentVolumeClaim source protects the source and starts the copy, and every
 * call until it ends answers `Background` with the progress (the controller's event shows it). At
 * most {@link maxRunningClones} copies run at once; a claim beyond that waits for its next call. A
 * deleted target claim cancels its copy; a failed or cancelled copy leaves nothing behind.
 */
import type { ClaimDataSource, OperationContext } from '@kube-provisioner/controller';
import { isNotFound } from '@kube-provisioner/controller/client';
import type {
  CloneVolumeOptions,
  CopyProgress,
  RelativeVolumePath,
  VolumeRoot,
} from '@kube-provisioner/safe-fs';
import type { V1PersistentVolume, V1PersistentVolumeClaim } from '@kubernetes/client-node';
import { type CloneSourceAccess, cloneSource, protectSource, releaseSource } from './clone-source.ts';

/** Copies running at once; more claims wait (the disk, not the CPU, bounds a copy). */
export const maxRunningClones = 2;

const claimCheckIntervalMs = 5000;

/** One claim's clone. */
export interface CloneRequest {
  readonly pvc: Readonly<V1PersistentVolumeClaim>;
  readonly pvName: string;
  readonly path: RelativeVolumePath;
  readonly dataSource: ClaimDataSource;
  /** The new volume's owner, modes and special-file policy. */
  readonly volume: Omit<CloneVolumeOptions, 'sourcePvName' | 'signal' | 'onProgress' | 'beforeEachWrite'>;
  /** The source PV's directory below the root; throws for a PV that is not on this export. */
  readonly pathOf: (pv: Readonly<V1PersistentVolume>) => RelativeVolumePath;
}

interface CloneJob {
  readonly source: { readonly namespace: string; readonly name: string };
  progress: CopyProgress;
  /** Set once the copy ended: `undefined` error for success. */
  ended: { readonly error: unknown } | undefined;
}

/** `ended` when the volume holds its copy; else why the claim must be called again. */
export type CloneStep = { readonly ended: true } | { readonly ended: false; readonly message: string };

function describe(progress: CopyProgress): string {
  const skipped = progress.skipped > 0 ? `, ${progress.skipped} special files skipped` : '';
  return `${progress.entries} entries, ${progress.bytes} bytes copied${skipped}`;
}

/** The background clones of one provisioner. */
export class CloneJobs {
  readonly #root: VolumeRoot;
  readonly #access: CloneSourceAccess;
  readonly #provisionerName: string;
  readonly #jobs = new Map<string, CloneJob>();
  readonly #checkIntervalMs: number;

  /** `checkIntervalMs`: how often a running copy checks that its claim still exists. */
  constructor(
    root: VolumeRoot,
    access: CloneSourceAccess,
    provisionerName: string,
    checkIntervalMs: number = claimCheckIntervalMs,
  ) {
    this.#root = root;
    this.#access = access;
    this.#provisionerName = provisionerName;
    this.#checkIntervalMs = checkIntervalMs;
  }

  /**
   * Advances the clone of `request.pvc`: starts it, reports its progress, or ends it.
   *
   * @throws the copy's error once (the next call starts over), or why the source cannot be cloned.
   */
  async step(request: CloneRequest, context: OperationContext): Promise<CloneStep> {
    const uid = request.pvc.metadata?.uid ?? '';
    const what = `cloning ${request.dataSource.namespace}/${request.dataSource.name} into ${request.path}`;
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
      return { ended: false, message: `${what}: waiting, ${running} clones are running` };
    }
    const { claim, pv } = await cloneSource(
      this.#access,
      request.dataSource,
      request.pvc,
      this.#provisionerName,
      context.signal,
    );
    const sourcePath = request.pathOf(pv);
    context.assertLeader();
    await protectSource(this.#access, claim, context.signal);
    this.#start(uid, request, sourcePath, pv.metadata?.name ?? '', context);
    return { ended: false, message: `${what}: started` };
  }

  #start(
    uid: string,
    request: CloneRequest,
    sourcePath: RelativeVolumePath,
    sourcePvName: string,
    context: OperationContext,
  ): void {
    const { namespace, name } = request.dataSource;
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
    this.#root
      .cloneVolume(sourcePath, request.path, {
        ...request.volume,
        sourcePvName,
        signal: abort.signal,
        onProgress: (progress) => {
          job.progress = progress;
        },
        beforeEachWrite: fence,
      })
      .then(
        (progress) => {
          job.progress = progress;
          job.ended = { error: undefined };
        },
        async (error: unknown) => {
          // Nothing half-made stays: the empty volume goes, and the source is free again.
          await this.#root
            .deleteVolume(request.path, { pvName: request.pvName, beforeEachWrite: fence })
            .then(fence)
            .then(() => releaseSource(this.#access, job.source, AbortSignal.timeout(30_000)))
            .catch((err: unknown) => context.logger.warn({ err }, 'could not clean up after a failed clone'));
          context.logger.warn({ path: request.path, err: error }, 'clone failed');
          if (abort.signal.aborted) this.#jobs.delete(uid);
          else job.ended = { error };
        },
      )
      .finally(() => clearInterval(watch));
  }

  /** Aborts the copy when its claim is gone (deleted, or replaced by one of the same name). */
  async #cancelIfDeleted(pvc: Readonly<V1PersistentVolumeClaim>, abort: AbortController): Promise<void> {
    const { name = '', namespace = '', uid } = pvc.metadata ?? {};
    try {
      const current = await this.#access.claims.get(name, { namespace, signal: AbortSignal.timeout(10_000) });
      if (current.metadata?.uid === uid && current.metadata?.deletionTimestamp === undefined) return;
    } catch (err) {
      if (!isNotFound(err)) return;
    }
    abort.abort(new Error(`claim ${namespace}/${name} was deleted; its clone is cancelled`));
  }
}
