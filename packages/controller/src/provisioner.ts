/**
 * The contract between a provisioner and `ProvisionController`: implement `provision` and
 * `delete`, optionally the hooks, and the controller does the rest.
 *
 * Obligations of every provisioner:
 * - `provision` and `delete` MAY be called more than once for the same claim or volume, including
 *   after a success the controller did not observe. Both MUST be idempotent.
 * - The returned PV MUST be named `options.pvName` and carry capacity, access modes, reclaim policy,
 *   mount options, volume mode, node affinity and the volume source. The controller adds only
 *   `spec.claimRef`, `spec.storageClassName`, `spec.volumeAttributesClassName` (the claim's), the
 *   `pv.kubernetes.io/provisioned-by` annotation and (optionally) its finalizer.
 * - `options.pvc`, `options.storageClass` and `options.volumeAttributesClass` are frozen: never mutate them.
 *
 * The root entry re-exports the parts a provisioner names; this entry has every one.
 *
 * Stability: stable (see "Versioning" in the repository README).
 *
 * @packageDocumentation
 */
import type {
  V1PersistentVolume,
  V1PersistentVolumeClaim,
  V1StorageClass,
  V1VolumeAttributesClass,
} from '@kubernetes/client-node';
import type { Logger } from './util/logger.ts';

/**
 * What is still running after a failed `provision` (values identical to the Go library):
 * - `Background`: the operation may still be running on the backend; the controller calls
 *   `provision` again with the same inputs until it finishes.
 * - `Finished`: nothing is running; a retry starts from scratch.
 * - `NoChange`: leave the previous state as it was.
 * - `Reschedule`: give up on the selected node and let the scheduler choose again (only for claims
 *   with `volume.kubernetes.io/selected-node`, and only when nothing continues in the background).
 */
export type ProvisioningState = 'Background' | 'Finished' | 'NoChange' | 'Reschedule';

/**
 * A kind of object a claim can name as its data source: `apiGroup` `''` is the core group, as for
 * `{ apiGroup: '', kind: 'PersistentVolumeClaim' }` (a clone).
 */
export interface DataSourceKind {
  readonly apiGroup: string;
  readonly kind: string;
}

/**
 * The object a claim asks its volume to be populated from: `spec.dataSource`, else
 * `spec.dataSourceRef` (the API server copies one into the other when it can), as external-provisioner
 * reads it.
 */
export interface ClaimDataSource extends DataSourceKind {
  readonly name: string;
  /** The claim's namespace, unless a cross-namespace `dataSourceRef` names another. */
  readonly namespace: string;
}

/** Inputs of one `provision` call. */
export interface ProvisionOptions {
  /** The claim's StorageClass (parameters, reclaim policy, mount options, topologies, binding mode). */
  readonly storageClass: Readonly<V1StorageClass>;
  /** The name the returned PV must have. */
  readonly pvName: string;
  /** The claim, deep-frozen. */
  readonly pvc: Readonly<V1PersistentVolumeClaim>;
  /** The scheduler's selected node for WaitForFirstConsumer claims, else `''`. */
  readonly selectedNodeName: string;
  /**
   * The claim's data source, present only when it is one of {@link Provisioner.dataSources}: the new
   * volume must hold its data. Reading the source object (and, across namespaces, checking its
   * ReferenceGrant) is the provisioner's job. Claims naming a source the provisioner does not list
   * never reach `provision`.
   */
  readonly dataSource?: ClaimDataSource;
  /**
   * The VolumeAttributesClass the claim names in `spec.volumeAttributesClassName`, from the
   * controller's cache, deep-frozen: its `parameters` are for this provisioner (the controller refuses
   * a class whose `driverName` is not one of its names). The controller writes its name into the
   * PV's `spec.volumeAttributesClassName`, which the PV controller requires to bind. Present only
   * when the claim names a class and {@link Provisioner.supportsVolumeAttributesClasses} says yes.
   * Refuse parameters you do not support with an `InfeasibleError`.
   */
  readonly volumeAttributesClass?: Readonly<V1VolumeAttributesClass>;
}

/** Per-call context: cancellation, the leadership fence and a logger carrying the object's keys. */
export interface OperationContext {
  /**
   * Aborted when the operation times out, the controller's graceful stop runs out of time, or (with
   * leader election) this replica's Lease is lost or its last renewal is older than `renewDeadlineMs`.
   * It fires from a timer, so after the process was frozen it can come after I/O callbacks have
   * already resumed your code: call {@link OperationContext.assertLeader} before each irreversible step.
   */
  readonly signal: AbortSignal;
  /**
   * Throws a `LeadershipLapsedError` when this replica must not act any more: with leader election,
   * once the last successful renewal of its Lease was sent more than `renewDeadlineMs` ago, once the
   * Lease is lost, or after the process was stalled for longer than `retryPeriodMs` until a renewal
   * succeeds. Call it immediately before each backend step that another replica must not repeat or
   * race (create, delete, archive); let the error propagate: the controller abandons the operation
   * without an event or a failure count, and the next leader calls you again. A no-op without leader
   * election. Synchronous and cheap: it reads the clock.
   */
  assertLeader(): void;
  readonly logger: Logger;
  /**
   * Syncs the object this call is about (the claim of `provision` or `expand`, the PV of `delete`)
   * again at once, without the retry back-off. For work that goes on after the call returned
   * `Background`: call it when that work ends, so that the next call picks up its result instead of
   * waiting out the back-off (`CloneJobs` does for its copies). May be called any time after the
   * call, also more than once; ignored once the controller has stopped. Absent for calls about no
   * single object (`maintain`). Not part of the Go library.
   */
  readonly requeue?: (() => void) | undefined;
}

/** Outcome of `provision`: a PV to save, or an error with the state of the backend operation. */
export type ProvisionResult =
  | { readonly pv: V1PersistentVolume; readonly state?: 'Finished' }
  | { readonly error: Error; readonly state: ProvisioningState };

/** A failed {@link ProvisionResult} whose operation is over, as `provisionFailure` returns it. */
export type ProvisionFailure = Extract<ProvisionResult, { readonly error: Error }> & {
  readonly state: 'Finished';
};

/** Inputs of one `expand` call. */
export interface ExpandOptions {
  /** The volume to grow, deep-frozen: its `spec.capacity.storage` is what it holds now. */
  readonly pv: Readonly<V1PersistentVolume>;
  /** The claim bound to it, deep-frozen. */
  readonly pvc: Readonly<V1PersistentVolumeClaim>;
  /** The claim's StorageClass (its `allowVolumeExpansion` is true). */
  readonly storageClass: Readonly<V1StorageClass>;
  /**
   * The size to grow to, a Kubernetes quantity such as `'2Gi'`: the claim's request, or after an
   * interrupted attempt the size that attempt recorded in `status.allocatedResources`. Never smaller
   * than the volume's capacity.
   */
  readonly capacity: string;
}

/**
 * Outcome of `expand`: the capacity the volume holds now (a quantity, at least the requested one,
 * usually `options.capacity`), or an error with the state of the backend operation:
 * `Background` when it may still be running (the controller retries the same size, and the claim's
 * request cannot be lowered meanwhile), `Finished` when nothing changed (the next attempt takes the
 * claim's request as it is then, so a user can lower an impossible request). An `InfeasibleError`
 * marks the claim `ControllerResizeInfeasible` and is not retried until the claim changes. A thrown
 * error counts as `{ error, state: 'Background' }`.
 */
export type ExpandResult =
  | { readonly capacity: string }
  | { readonly error: Error; readonly state: 'Background' | 'Finished' };

/** A dynamic volume provisioner. A thrown error is treated as `{ error, state: 'NoChange' }`. */
export interface Provisioner {
  /** Creates the backing asset and returns the PV to save. */
  provision(options: ProvisionOptions, context: OperationContext): Promise<ProvisionResult>;
  /** Removes the backing asset of `pv`; never deletes the PV object itself. May reject with an `IgnoredError`. */
  delete(pv: Readonly<V1PersistentVolume>, context: OperationContext): Promise<void>;
  /**
   * Extra veto on a claim (Go's `Qualifier`). It runs in a worker after leadership is won, not
   * before leader election.
   */
  shouldProvision?(
    pvc: Readonly<V1PersistentVolumeClaim>,
    context: OperationContext,
  ): boolean | Promise<boolean>;
  /** Extra guard before deleting a released volume (Go's `DeletionGuard`). */
  shouldDelete?(pv: Readonly<V1PersistentVolume>, context: OperationContext): boolean | Promise<boolean>;
  /**
   * Extra guard before expanding a volume, e.g. only the instance on the volume's node in a per-node
   * deployment. `false` leaves the claim to another instance: no status, event or `expand` call.
   * Not part of the Go library.
   */
  shouldExpand?(pv: Readonly<V1PersistentVolume>, context: OperationContext): boolean | Promise<boolean>;
  /** Whether `volumeMode: Block` claims are supported. Absent means no. */
  supportsBlock?(context: OperationContext): boolean;
  /**
   * Whether claims that name a VolumeAttributesClass are supported. Absent means no: such a claim
   * gets one Warning `ProvisioningFailed` event per sync and no volume, and no class is read. Say yes
   * only if `provision` returns CSI volumes (`spec.csi`): the API server accepts
   * `spec.volumeAttributesClassName` on no other PV, and the PV controller binds a claim that names a
   * class only to a PV that carries the same one.
   */
  supportsVolumeAttributesClasses?(context: OperationContext): boolean;
  /**
   * The data sources `provision` can populate a volume from (e.g. `{ apiGroup:
   * 'snapshot.storage.k8s.io', kind: 'VolumeSnapshot' }`); absent means none. The controller never
   * calls `provision` for a claim whose source is not listed: a PersistentVolumeClaim or
   * VolumeSnapshot source (which no volume populator serves) gets one Warning `ProvisioningFailed`
   * event per sync, and any other kind is left to its volume populator (KEP-1495) with a Normal
   * `Provisioning` event, as external-provisioner does, so the populator can fill the volume.
   */
  readonly dataSources?: readonly DataSourceKind[];
  /**
   * Periodic work on the backend that no claim or PV asks for, such as removing expired archives.
   * Called once the caches have synced in each leadership term (each `run()` without leader
   * election), then `maintenanceIntervalMs` after the previous call ended: never two at once, never
   * by a replica that does not lead. Fenced like every operation: call
   * {@link OperationContext.assertLeader} before each step; the signal aborts when the term ends. A
   * rejection is logged and the next call comes on schedule. Not part of the Go library.
   */
  maintain?(context: OperationContext): Promise<void>;
  /**
   * Grows the backing asset of a bound volume (what external-resizer's `ControllerExpandVolume`
   * does). Called by the leader when a claim of a class with `allowVolumeExpansion: true` asks for
   * more than its PV holds; the controller then writes the PV's capacity and the claim's status.
   * Absent means the controller does nothing for resizes. MUST be idempotent: after a hand-over or a
   * lost reply it is called again with the same size. Call {@link OperationContext.assertLeader}
   * right before the irreversible step. Not part of the Go library.
   */
  expand?(options: ExpandOptions, context: OperationContext): Promise<ExpandResult>;
}
