/**
 * The resize path of a bound claim, as external-resizer runs it with recovery from failed expansion:
 * record the size as allocated, call `Provisioner.expand`, write the PV's capacity, then the claim's.
 * One {@link ClaimResize.sync} call is one work item of the claim queue.
 */
import type { V1PersistentVolume, V1PersistentVolumeClaim, V1StorageClass } from '@kubernetes/client-node';
import { compareQuantities } from '../client/quantity.ts';
import type { ResourceClient } from '../client/resource-client.ts';
import { isInfeasibleError } from '../errors.ts';
import { isLeadershipLapsedError } from '../leader-election/lease-fence.ts';
import type { ExpandResult, OperationContext, Provisioner } from '../provisioner.ts';
import type { Clock } from '../util/clock.ts';
import { claimClassName, claimKey } from './claim-fields.ts';
import { withDeadline } from './deadline.ts';
import { frozenClone } from './deep-freeze.ts';
import type { RecordEvent } from './record-event.ts';
import {
  type ClaimStatusPatch,
  failedPatch,
  finishedPatch,
  inProgressPatch,
  resizeDecision,
} from './resize-decision.ts';
import type { ResizeMetrics } from './resize-metrics.ts';
import { toError } from './to-error.ts';
import { isProvisionerForVolume } from './volume-policy.ts';
import type { WorkFence } from './work-fence.ts';

/** What the resize path needs from the controller. */
export interface ClaimResizeConfig {
  /** `Provisioner.expand`, bound to its provisioner. */
  readonly expand: NonNullable<Provisioner['expand']>;
  /** `Provisioner.shouldExpand`, bound to its provisioner; absent means every volume of ours. */
  readonly shouldExpand?: NonNullable<Provisioner['shouldExpand']> | undefined;
  readonly provisionerName: string;
  /** The provisioner name and the additional names: the PVs this controller may expand. */
  readonly knownNames: ReadonlySet<string>;
  readonly claims: ResourceClient<V1PersistentVolumeClaim>;
  readonly volumes: ResourceClient<V1PersistentVolume>;
  /** The cached PV by name. */
  readonly getVolume: (name: string) => V1PersistentVolume | undefined;
  /** The cached class by name. */
  readonly getClass: (name: string) => V1StorageClass | undefined;
  readonly recordEvent: RecordEvent;
  readonly metrics: ResizeMetrics;
  readonly clock: Clock;
  readonly apiRequestTimeoutMs: number;
  /** Checked immediately before each side effect. */
  readonly fence: WorkFence;
}

export class ClaimResize {
  readonly #config: ClaimResizeConfig;
  /** Claims whose last `expand` failed with nothing left running: they may start over from their request. */
  readonly #finalErrors = new Set<string>();
  /**
   * Capacities this controller recorded, by claim UID, until the claim cache shows them: the patches
   * do not write to the informer's cache, and an older cached claim must not be resized again.
   */
  readonly #recorded = new Map<string, string>();

  constructor(config: ClaimResizeConfig) {
    this.#config = config;
  }

  /** Drops what is remembered about a claim that no longer exists. */
  forget(uid: string): void {
    this.#finalErrors.delete(uid);
    this.#recorded.delete(uid);
  }

  /** Expands the volume of `claim` when it asks for more. Rejects when the claim must be requeued. */
  async sync(claim: V1PersistentVolumeClaim, context: OperationContext): Promise<void> {
    const { getVolume, getClass, knownNames } = this.#config;
    const uid = claim.metadata?.uid ?? '';
    if (this.#isStale(claim)) return;
    const requested = claim.spec?.resources?.requests?.storage;
    if (compareQuantities(requested, claim.status?.capacity?.storage) <= 0) return;
    const volumeName = claim.spec?.volumeName ?? '';
    const pv = getVolume(volumeName);
    // The PV informer may not have delivered it yet.
    if (pv === undefined) throw new Error(`PV "${volumeName}" bound to claim "${claimKey(claim)}" not found`);
    if (!isProvisionerForVolume(pv, knownNames)) return;
    const className = claimClassName(claim);
    const storageClass = getClass(className);
    if (storageClass?.allowVolumeExpansion !== true) {
      context.logger.debug({ PVC: claimKey(claim) }, 'StorageClass does not allow volume expansion');
      return;
    }
    const { shouldExpand } = this.#config;
    if (shouldExpand !== undefined && !(await shouldExpand(frozenClone(pv), context))) {
      context.logger.debug({ PVC: claimKey(claim) }, 'Volume expansion left to another instance');
      return;
    }
    const decision = resizeDecision(claim, pv, this.#finalErrors.has(uid));
    const logger = context.logger.child({ PVC: claimKey(claim), PV: volumeName });
    const scoped = { ...context, logger };
    if (decision.kind === 'none') {
      logger.debug({ reason: decision.reason }, 'No volume expansion');
      return;
    }
    if (decision.kind === 'record') {
      await this.#record(claim, decision.capacity, decision.shrinkFrom, scoped);
      return;
    }
    let current = claim;
    if (decision.markInProgress) {
      current = await this.#patchClaim(claim, inProgressPatch(claim, decision.capacity, this.#now()), scoped);
    }
    await this.#expand(current, pv, storageClass, decision.capacity, scoped);
  }

  async #expand(
    claim: V1PersistentVolumeClaim,
    pv: V1PersistentVolume,
    storageClass: V1StorageClass,
    capacity: string,
    context: OperationContext,
  ): Promise<void> {
    const { fence, recordEvent, metrics, clock } = this.#config;
    const pvName = pv.metadata?.name ?? '';
    const labels = { class: storageClass.metadata?.name ?? '' };
    recordEvent(claim, 'Normal', 'Resizing', `External resizer is resizing volume ${pvName}`);
    const start = clock.now();
    fence.assertLeader();
    const result = await callExpand(
      this.#config.expand,
      { pv: frozenClone(pv), pvc: frozenClone(claim), storageClass: frozenClone(storageClass), capacity },
      context,
    );
    if ('error' in result) {
      if (isLeadershipLapsedError(result.error) || fence.abandoned()) throw result.error;
      metrics.resizeFailedTotal.inc(labels);
      return this.#failed(claim, pvName, result.error, result.state, context);
    }
    const expanded = result.capacity;
    if (compareQuantities(expanded, capacity) < 0) {
      metrics.resizeFailedTotal.inc(labels);
      const error = new Error(`expand returned capacity ${expanded}, less than the requested ${capacity}`);
      return this.#failed(claim, pvName, error, 'Background', context);
    }
    this.#finalErrors.delete(claim.metadata?.uid ?? '');
    await this.#withDeadline(context, (signal) =>
      this.#config.volumes.patch(pvName, { spec: { capacity: { storage: expanded } } }, 'merge', {
        signal,
        beforeSend: fence.assertLeader,
      }),
    );
    context.logger.debug({ capacity: expanded }, 'Updated the capacity of the PV');
    await this.#finish(claim, expanded, context);
    metrics.resizeDurationSeconds.observe(labels, (clock.now() - start) / 1000);
    metrics.resizeTotal.inc(labels);
  }

  /** The volume holds the size already: only the claim's status is behind. */
  async #record(
    claim: V1PersistentVolumeClaim,
    capacity: string,
    shrinkFrom: string | undefined,
    context: OperationContext,
  ): Promise<void> {
    if (shrinkFrom !== undefined) {
      const message = `Volume ${claim.spec?.volumeName ?? ''} holds ${capacity}, more than the ${shrinkFrom} the claim asks for: volumes are never shrunk, recording ${capacity} as the claim's capacity`;
      this.#config.recordEvent(claim, 'Warning', 'VolumeResizeFailed', message);
      context.logger.info(message);
    }
    await this.#finish(claim, capacity, context, shrinkFrom === undefined);
  }

  async #finish(
    claim: V1PersistentVolumeClaim,
    capacity: string,
    context: OperationContext,
    succeeded = true,
  ): Promise<void> {
    await this.#patchClaim(claim, finishedPatch(claim, capacity), context);
    this.#recorded.set(claim.metadata?.uid ?? '', capacity);
    if (succeeded)
      this.#config.recordEvent(claim, 'Normal', 'VolumeResizeSuccessful', 'Resize volume succeeded');
  }

  /**
   * After a failed `expand`: one Warning event; a final failure is recorded on the claim (and lets
   * the next attempt take the request as it is then), an infeasible one also as
   * `ControllerResizeInfeasible` and without a retry: the claim's owner has to change the request.
   */
  async #failed(
    claim: V1PersistentVolumeClaim,
    pvName: string,
    cause: Error,
    state: 'Background' | 'Finished',
    context: OperationContext,
  ): Promise<void> {
    const error = new Error(
      `resize volume "${pvName}" by resizer "${this.#config.provisionerName}" failed: ${cause.message}`,
      { cause },
    );
    this.#config.recordEvent(claim, 'Warning', 'VolumeResizeFailed', error.message);
    const uid = claim.metadata?.uid ?? '';
    const infeasible = isInfeasibleError(cause);
    if (!infeasible && state === 'Background') {
      this.#finalErrors.delete(uid);
      throw error;
    }
    this.#finalErrors.add(uid);
    await this.#patchClaim(claim, failedPatch(claim, cause, infeasible, this.#now()), context);
    if (infeasible) {
      context.logger.info({ err: cause }, 'Volume expansion is infeasible; waiting for the claim to change');
      return;
    }
    throw error;
  }

  /** Whether `claim` is older than a capacity this controller recorded (see {@link #recorded}). */
  #isStale(claim: Readonly<V1PersistentVolumeClaim>): boolean {
    const uid = claim.metadata?.uid ?? '';
    const recorded = this.#recorded.get(uid);
    if (recorded === undefined) return false;
    if (compareQuantities(claim.status?.capacity?.storage, recorded) < 0) return true;
    this.#recorded.delete(uid);
    return false;
  }

  #patchClaim(
    claim: Readonly<V1PersistentVolumeClaim>,
    patch: ClaimStatusPatch,
    context: OperationContext,
  ): Promise<V1PersistentVolumeClaim> {
    const { name = '', namespace = '' } = claim.metadata ?? {};
    const { fence } = this.#config;
    fence.assertLeader();
    return this.#withDeadline(context, (signal) =>
      this.#config.claims.patch(name, patch, 'merge', {
        namespace,
        signal,
        subresource: 'status',
        beforeSend: fence.assertLeader,
      }),
    );
  }

  #withDeadline<T>(context: OperationContext, fn: (signal: AbortSignal) => Promise<T>): Promise<T> {
    return withDeadline(this.#config.clock, this.#config.apiRequestTimeoutMs, context.signal, fn);
  }

  #now(): Date {
    return new Date(this.#config.clock.wallNow());
  }
}

/** Calls `expand`; a thrown error counts as `{ error, state: 'Background' }`. */
async function callExpand(
  expand: NonNullable<Provisioner['expand']>,
  options: Parameters<NonNullable<Provisioner['expand']>>[0],
  context: OperationContext,
): Promise<ExpandResult> {
  try {
    return await expand(options, context);
  } catch (err) {
    return { error: toError(err), state: 'Background' };
  }
}
