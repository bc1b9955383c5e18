/**
 * The claim path: decide whether a claim is ours, call `provision`, save the PV, and keep
 * the in-progress map up to date. One {@link ClaimSync.sync} call is one work item.
 */
import type {
  V1PersistentVolume,
  V1PersistentVolumeClaim,
  V1StorageClass,
  V1VolumeAttributesClass,
} from '@kubernetes/client-node';
import { isIgnoredError, isInfeasibleError } from '../errors.ts';
import { isLeadershipLapsedError } from '../leader-election/lease-fence.ts';
import type { ProvisionControllerEvents } from '../lifecycle-events.ts';
import type {
  ClaimDataSource,
  OperationContext,
  Provisioner,
  ProvisioningState,
  ProvisionOptions,
  ProvisionResult,
} from '../provisioner.ts';
import type { Clock } from '../util/clock.ts';
import type { LifecycleSink } from '../util/lifecycle-emitter.ts';
import { annDynamicallyProvisioned, finalizerPV } from '../wire-names.ts';
import { dataSourceDecision, describeDataSource } from './claim-data-source.ts';
import {
  claimClassName,
  claimKey,
  claimMetricLabels,
  claimReference,
  hasSelectedNode,
  hasSelectedNodeAnnotation,
  isBlockClaim,
  requestedProvisioner,
  selectedNodeName,
} from './claim-fields.ts';
import type { ClaimResize } from './claim-resize.ts';
import type { ControllerMetrics } from './controller-metrics.ts';
import { frozenClone } from './deep-freeze.ts';
import type { PvStore } from './pv-store.ts';
import type { RecordEvent } from './record-event.ts';
import type { SlowRetrySet } from './slow-retry.ts';
import { toError } from './to-error.ts';
import type { VolumeAttributesClassLookup } from './volume-attributes-classes.ts';
import type { WorkFence } from './work-fence.ts';

/** A claim sync refused because the claim recently failed with an infeasible error. */
export class DelayRetryError extends Error {
  override readonly name = 'DelayRetryError';
}

/** What the claim path needs from the controller. */
export interface ClaimSyncConfig {
  readonly provisioner: Provisioner;
  readonly provisionerName: string;
  /** The provisioner name and the additional names. */
  readonly knownNames: ReadonlySet<string>;
  readonly volumeName: (claim: Readonly<V1PersistentVolumeClaim>) => string;
  readonly addFinalizer: boolean;
  /** The cached claims with a UID (at most one in practice). */
  readonly claimsByUid: (uid: string) => readonly V1PersistentVolumeClaim[];
  /** The cached class by name. */
  readonly getClass: (name: string) => V1StorageClass | undefined;
  /** Whether the PV cache holds `name`. */
  readonly volumeExists: (name: string) => boolean;
  /** The VolumeAttributesClass named `name`, from its cache. */
  readonly volumeAttributesClass: (name: string, signal: AbortSignal) => Promise<VolumeAttributesClassLookup>;
  /** Removes the GA selected-node annotation from the claim on the API server. */
  readonly reschedule: (claim: Readonly<V1PersistentVolumeClaim>, signal: AbortSignal) => Promise<void>;
  readonly slowRetry: SlowRetrySet;
  /** The resize path of bound claims; absent when the provisioner cannot `expand`. */
  readonly resize?: ClaimResize;
  readonly recordEvent: RecordEvent;
  readonly store: PvStore;
  readonly metrics: ControllerMetrics;
  /** Receives `provisioned` and `provisionFailed`. */
  readonly events: LifecycleSink<ProvisionControllerEvents>;
  readonly clock: Clock;
  /** Checked immediately before each side effect. */
  readonly fence: WorkFence;
}

/**
 * Result of one provision attempt: saved, stopped for good (Go's `errStopProvision`), rescheduled
 * after a provisioner error (a stop too), failed, or abandoned because the controller stops or no
 * longer leads (neither an event nor a failure).
 */
type Outcome =
  | { readonly kind: 'provisioned'; readonly volume: V1PersistentVolume }
  | { readonly kind: 'stop' }
  | { readonly kind: 'rescheduled'; readonly error: Error }
  | { readonly kind: 'abandoned'; readonly error: Error }
  | { readonly kind: 'failed'; readonly error: Error; readonly state: ProvisioningState };

const finished = (error: Error): Outcome => ({ kind: 'failed', error, state: 'Finished' });
const stop: Outcome = { kind: 'stop' };

export class ClaimSync {
  /** Claims in progress: UID → the claim as last seen. */
  readonly inProgress: Map<string, V1PersistentVolumeClaim> = new Map();
  readonly #config: ClaimSyncConfig;
  /**
   * Claims whose selected node this controller removed: UID → the resourceVersion the removal was
   * made from. Until the cache shows another version, the cached claim still names the rejected node
   * and must not be provisioned again (the patch does not write to the informer's cache).
   */
  readonly #rescheduled = new Map<string, string>();

  constructor(config: ClaimSyncConfig) {
    this.#config = config;
  }

  /**
   * Work item of queue `claims`: resolves the UID through the claim cache, else the in-progress map
   * (so a claim deleted mid-provisioning is still finished), then syncs it.
   */
  async syncKey(uid: string, context: OperationContext): Promise<void> {
    const claim = this.#config.claimsByUid(uid)[0] ?? this.inProgress.get(uid);
    if (claim === undefined) {
      this.#rescheduled.delete(uid);
      this.#config.resize?.forget(uid);
      context.logger.info(`claim "${uid}" in work queue no longer exists`);
      return;
    }
    // A bound claim is never provisioned (see shouldProvision); it may ask for a larger volume.
    if (claim.spec?.volumeName && this.#config.resize !== undefined) {
      await this.#config.resize.sync(claim, context);
      return;
    }
    await this.sync(claim, context);
  }

  /** Syncs one claim. Rejects when the claim must be requeued. */
  async sync(claim: V1PersistentVolumeClaim, context: OperationContext): Promise<void> {
    const { metrics, clock, events } = this.#config;
    const labels = claimMetricLabels(claim);
    if (this.#isStaleAfterReschedule(claim)) {
      context.logger.debug({ claimUID: claim.metadata?.uid }, 'Claim was rescheduled; waiting for the cache');
      return;
    }
    this.#delayIfRecentlyInfeasible(claim);
    let should: boolean;
    try {
      should = await this.shouldProvision(claim, context);
    } catch (err) {
      if (!this.#config.fence.abandoned()) {
        metrics.provisionFailedTotal.inc(labels);
        events.emit('provisionFailed', () => ({ pvc: claim, claim, error: toError(err), state: 'NoChange' }));
      }
      throw err;
    }
    if (!should) return;

    const start = clock.now();
    const outcome = await this.#provisionClaimOperation(claim, context);
    // Claims in progress stay as they are: the process is stopping, and a successor starts afresh.
    if (outcome.kind === 'abandoned') throw outcome.error;
    if (outcome.kind === 'provisioned') {
      const durationMs = clock.now() - start;
      metrics.provisionDurationSeconds.observe(labels, durationMs / 1000);
      metrics.provisionTotal.inc(labels);
      events.emit('provisioned', () => ({
        pvc: claim,
        pv: outcome.volume,
        claim,
        volume: outcome.volume,
        durationMs,
      }));
    } else {
      metrics.provisionFailedTotal.inc(labels);
      if (outcome.kind === 'failed' || outcome.kind === 'rescheduled') {
        const { error } = outcome;
        const state = outcome.kind === 'failed' ? outcome.state : 'Reschedule';
        events.emit('provisionFailed', () => ({ pvc: claim, claim, error, state }));
      }
    }
    this.#applyOutcome(claim, outcome, context);
  }

  /** Whether `claim` should be provisioned now. Rejects when its class is not cached. */
  async shouldProvision(
    claim: Readonly<V1PersistentVolumeClaim>,
    context: OperationContext,
  ): Promise<boolean> {
    const { provisioner, knownNames } = this.#config;
    if (claim.spec?.volumeName) return false;
    if (provisioner.shouldProvision && !(await provisioner.shouldProvision(frozenClone(claim), context))) {
      return false;
    }
    const requested = requestedProvisioner(claim);
    if (requested === undefined || !knownNames.has(requested)) return false;
    const storageClass = this.#storageClass(claimClassName(claim));
    if (storageClass.volumeBindingMode === 'WaitForFirstConsumer') return hasSelectedNode(claim);
    return true;
  }

  /** The in-progress state machine: in-progress map updates; throws the error of a sync that must be requeued. */
  #applyOutcome(claim: V1PersistentVolumeClaim, outcome: Outcome, context: OperationContext): void {
    const uid = claim.metadata?.uid ?? '';
    if (outcome.kind !== 'failed') {
      context.logger.trace({ claimUID: uid }, 'Claim processing ended, removing PVC from claims in progress');
      this.inProgress.delete(uid);
      return;
    }
    if (outcome.state === 'Finished') {
      context.logger.info({ claimUID: uid }, 'Final error received, removing PVC from claims in progress');
      this.inProgress.delete(uid);
    } else if (outcome.state === 'Background') {
      context.logger.info({ claimUID: uid }, 'Temporary error received, adding PVC to claims in progress');
      this.inProgress.set(uid, claim);
    }
    throw outcome.error;
  }

  /** Whether `claim` is the cached version this controller already rescheduled (see {@link #rescheduled}). */
  #isStaleAfterReschedule(claim: Readonly<V1PersistentVolumeClaim>): boolean {
    const uid = claim.metadata?.uid ?? '';
    const version = this.#rescheduled.get(uid);
    if (version === undefined) return false;
    if (version === (claim.metadata?.resourceVersion ?? '')) return true;
    this.#rescheduled.delete(uid);
    return false;
  }

  #delayIfRecentlyInfeasible(claim: Readonly<V1PersistentVolumeClaim>): void {
    const classUid = this.#config.getClass(claimClassName(claim))?.metadata?.uid;
    if (classUid === undefined) return;
    const uid = claim.metadata?.uid ?? '';
    if (this.#config.slowRetry.remaining(uid, classUid) > 0) {
      throw new DelayRetryError(
        `skipping volume provisioning for pvc ${uid}, because provisioning previously failed with infeasible error`,
      );
    }
  }

  async #provisionClaimOperation(
    claim: V1PersistentVolumeClaim,
    context: OperationContext,
  ): Promise<Outcome> {
    const { provisioner, provisionerName, knownNames, recordEvent } = this.#config;
    const className = claimClassName(claim);
    const logger = context.logger.child({ PVC: claimKey(claim), StorageClass: className });
    const pvName = this.#config.volumeName(claim);
    if (this.#config.volumeExists(pvName)) {
      logger.debug({ PV: pvName }, 'PersistentVolume already exists, skipping');
      return stop;
    }
    let claimRef: ReturnType<typeof claimReference>;
    try {
      claimRef = claimReference(claim);
    } catch (err) {
      logger.error({ err }, 'Unexpected error getting claim reference');
      return { kind: 'failed', error: toError(err), state: 'NoChange' };
    }
    if (isBlockClaim(claim) && !(provisioner.supportsBlock?.(context) ?? false)) {
      const message = `${provisionerName} does not support block volume provisioning`;
      recordEvent(claim, 'Warning', 'ProvisioningFailed', message);
      logger.error(message);
      return stop;
    }
    let storageClass: V1StorageClass;
    try {
      storageClass = this.#storageClass(className);
    } catch (err) {
      logger.error({ err }, "Error getting claim's StorageClass's fields");
      return finished(toError(err));
    }
    if (!knownNames.has(storageClass.provisioner)) {
      logger.error(
        { provisioner: storageClass.provisioner },
        "Unknown provisioner requested in claim's StorageClass",
      );
      return stop;
    }
    const source = dataSourceDecision(claim, provisioner.dataSources ?? []);
    if (source.kind === 'populator') {
      // The populator contract (KEP-1495): its own scratch claim gets the volume, filled, then rebound here.
      logger.debug(
        { dataSource: describeDataSource(source.source) },
        `data source (${source.source.kind}) is not handled by the provisioner, assuming an external populator will provision it`,
      );
      recordEvent(
        claim,
        'Normal',
        'Provisioning',
        'Assuming an external populator will provision the volume',
      );
      return stop;
    }
    if (source.kind === 'unsupported') {
      const message = `${provisionerName} does not support provisioning volumes from data source ${describeDataSource(source.source)}`;
      recordEvent(claim, 'Warning', 'ProvisioningFailed', message);
      logger.error(message);
      return stop;
    }
    const attributes = await this.#volumeAttributesClass(claim, { ...context, logger });
    if (attributes.kind === 'outcome') return attributes.outcome;

    const { fence } = this.#config;
    fence.assertLeader();
    recordEvent(
      claim,
      'Normal',
      'Provisioning',
      `External provisioner is provisioning volume for claim "${claimKey(claim)}"`,
    );
    const result = await callProvision(
      provisioner,
      provisionOptions(
        {
          storageClass: frozenClone(storageClass),
          pvName,
          pvc: frozenClone(claim),
          selectedNodeName: selectedNodeName(claim),
        },
        source.kind === 'handled' ? source.source : undefined,
        attributes.volumeAttributesClass,
      ),
      { ...context, logger },
    );
    if ('error' in result) {
      if (isLeadershipLapsedError(result.error) || fence.abandoned())
        return { kind: 'abandoned', error: result.error };
      return this.#provisionFailed(claim, result.error, result.state, { ...context, logger });
    }

    const volume = this.#completeVolume(result.pv, claimRef, storageClass, className, claim);
    try {
      // A provisioner that returns after its term ended (a paused process) has its result dropped.
      fence.assertLeader();
      logger.debug({ PV: result.pv.metadata?.name }, 'Volume is provisioned');
      await this.#config.store.savePersistentVolume(claim, volume, logger);
    } catch (err) {
      if (isLeadershipLapsedError(err) || fence.abandoned())
        return { kind: 'abandoned', error: toError(err) };
      return finished(toError(err));
    }
    return { kind: 'provisioned', volume };
  }

  /**
   * The claim's VolumeAttributesClass for `provision` (`undefined` when it names none), or the outcome
   * that ends this attempt. A provisioner that does not support classes, or a class of another
   * driver, is refused with one event and no retry (nothing about the claim can change that but an
   * update, which syncs it again); a class not (yet) known is retried with an event naming it, as
   * external-provisioner's failed GET is.
   */
  async #volumeAttributesClass(
    claim: Readonly<V1PersistentVolumeClaim>,
    context: OperationContext,
  ): Promise<
    | { readonly kind: 'class'; readonly volumeAttributesClass: V1VolumeAttributesClass | undefined }
    | { readonly kind: 'outcome'; readonly outcome: Outcome }
  > {
    const name = claim.spec?.volumeAttributesClassName ?? '';
    if (name === '') return { kind: 'class', volumeAttributesClass: undefined };
    const { provisioner, knownNames, provisionerName, recordEvent, fence } = this.#config;
    if (!(provisioner.supportsVolumeAttributesClasses?.(context) ?? false)) {
      // Only a CSI PV can carry the class, and the PV controller binds the claim to no PV without it.
      const message = `${provisionerName} does not support VolumeAttributesClasses: the claim names "${name}", which only a CSI volume can carry`;
      recordEvent(claim, 'Warning', 'ProvisioningFailed', message);
      context.logger.error(message);
      return { kind: 'outcome', outcome: stop };
    }
    const lookup = await this.#config.volumeAttributesClass(name, context.signal);
    if (lookup.kind !== 'found') {
      if (fence.abandoned()) return { kind: 'outcome', outcome: { kind: 'abandoned', error: lookup.error } };
      const error =
        lookup.kind === 'missing'
          ? lookup.error
          : new Error(`cannot read VolumeAttributesClass "${name}": ${lookup.error.message}`, {
              cause: lookup.error,
            });
      return { kind: 'outcome', outcome: await this.#provisionFailed(claim, error, 'NoChange', context) };
    }
    const { driverName } = lookup.volumeAttributesClass;
    if (!knownNames.has(driverName)) {
      // A class's driver and parameters are immutable: retrying cannot help, so no requeue.
      const message = `VolumeAttributesClass "${name}" referenced in the claim is for driver "${driverName}", which does not match driver name "${provisionerName}"`;
      recordEvent(claim, 'Warning', 'ProvisioningFailed', message);
      context.logger.error(message);
      return { kind: 'outcome', outcome: stop };
    }
    return { kind: 'class', volumeAttributesClass: frozenClone(lookup.volumeAttributesClass) };
  }

  async #provisionFailed(
    claim: Readonly<V1PersistentVolumeClaim>,
    error: Error,
    state: ProvisioningState,
    context: OperationContext,
  ): Promise<Outcome> {
    const { logger } = context;
    if (isIgnoredError(error)) {
      logger.debug({ reason: error.reason }, 'Volume provision ignored');
      return stop;
    }
    if (isInfeasibleError(error)) {
      logger.info({ err: error }, 'Detected infeasible volume provisioning request');
      const classUid = this.#config.getClass(claimClassName(claim))?.metadata?.uid;
      if (classUid === undefined) logger.error('Failed to get StorageClass for delay tracking');
      else this.#config.slowRetry.add(claim.metadata?.uid ?? '', classUid);
      this.#config.recordEvent(
        claim,
        'Warning',
        'ProvisioningFailed',
        `Volume provisioning failed with infeasible error. Retries will be delayed. ${error.message}`,
      );
      return finished(error);
    }
    this.#config.recordEvent(claim, 'Warning', 'ProvisioningFailed', error.message);
    if (state !== 'Reschedule') return { kind: 'failed', error, state };
    if (!hasSelectedNodeAnnotation(claim)) return finished(error);
    try {
      this.#config.fence.assertLeader();
      await this.#config.reschedule(claim, context.signal);
    } catch (err) {
      logger.info({ err }, 'Volume rescheduling failed');
      return finished(error);
    }
    this.#rescheduled.set(claim.metadata?.uid ?? '', claim.metadata?.resourceVersion ?? '');
    logger.info({ err: error }, 'Volume rescheduled because of the provisioning error');
    return { kind: 'rescheduled', error };
  }

  /**
   * Adds the fields the library owns to a shallow copy of the provisioner's PV. The
   * VolumeAttributesClass name is always the claim's: the PV controller binds a claim only to a PV
   * whose class name equals its own.
   */
  #completeVolume(
    pv: V1PersistentVolume,
    claimRef: ReturnType<typeof claimReference>,
    storageClass: V1StorageClass,
    className: string,
    claim: Readonly<V1PersistentVolumeClaim>,
  ): V1PersistentVolume {
    const finalizers = pv.metadata?.finalizers ?? [];
    const { volumeAttributesClassName: _provisioners, ...spec } = pv.spec ?? {};
    const attributesClassName = claim.spec?.volumeAttributesClassName ?? '';
    return {
      ...pv,
      metadata: {
        ...pv.metadata,
        annotations: { ...pv.metadata?.annotations, [annDynamicallyProvisioned]: storageClass.provisioner },
        ...(this.#config.addFinalizer && !finalizers.includes(finalizerPV)
          ? { finalizers: [...finalizers, finalizerPV] }
          : {}),
      },
      spec: {
        ...spec,
        claimRef,
        storageClassName: className,
        ...(attributesClassName === '' ? {} : { volumeAttributesClassName: attributesClassName }),
      },
    };
  }

  #storageClass(name: string): V1StorageClass {
    const storageClass = this.#config.getClass(name);
    if (storageClass === undefined) throw new Error(`storageClass "${name}" not found`);
    return storageClass;
  }
}

/** `options` with the optional inputs that are present. */
function provisionOptions(
  options: ProvisionOptions,
  dataSource: ClaimDataSource | undefined,
  volumeAttributesClass: Readonly<V1VolumeAttributesClass> | undefined,
): ProvisionOptions {
  return {
    ...options,
    ...(dataSource === undefined ? {} : { dataSource: Object.freeze({ ...dataSource }) }),
    ...(volumeAttributesClass === undefined ? {} : { volumeAttributesClass }),
  };
}

/** Calls `provision`; a thrown error counts as `{ error, state: 'NoChange' }` (as in Go). */
async function callProvision(
  provisioner: Provisioner,
  options: Parameters<Provisioner['provision']>[0],
  context: OperationContext,
): Promise<ProvisionResult> {
  try {
    return await provisioner.provision(options, context);
  } catch (err) {
    return { error: toError(err), state: 'NoChange' };
  }
}
