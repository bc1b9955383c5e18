/**
 * The typed lifecycle events of `ProvisionController`: hooks for users who want to
 * react to what the controller does without scraping logs or metrics. Payloads are built only when
 * someone listens; a listener that throws is logged and never fails the work that emitted.
 */
import type { V1PersistentVolume, V1PersistentVolumeClaim } from '@kubernetes/client-node';
import type { LeadingEvent, StoppedLeadingEvent } from './leader-election/leader-events.ts';
import type { ProvisioningState } from './provisioner.ts';

/**
 * Payload of `provisioned`: the PV for `pvc` was saved (with the `queue` PV save strategy, handed
 * to the background save queue) after the leadership check that follows `provision` passed.
 */
export interface ProvisionedEvent {
  /** The claim as the controller saw it when it provisioned. */
  readonly pvc: Readonly<V1PersistentVolumeClaim>;
  /** The PV as sent to the API server: the provisioner's PV with the fields the library adds. */
  readonly pv: Readonly<V1PersistentVolume>;
  /** @deprecated The same object as {@link ProvisionedEvent.pvc}; goes in the next major. */
  readonly claim: Readonly<V1PersistentVolumeClaim>;
  /** @deprecated The same object as {@link ProvisionedEvent.pv}; goes in the next major. */
  readonly volume: Readonly<V1PersistentVolume>;
  /** From the start of the provision attempt until the PV was saved, in milliseconds. */
  readonly durationMs: number;
}

/** Payload of `provisionFailed`: one provision attempt for `pvc` failed (it is retried as `state` says). */
export interface ProvisionFailedEvent {
  /** The claim as the controller saw it. */
  readonly pvc: Readonly<V1PersistentVolumeClaim>;
  /** @deprecated The same object as {@link ProvisionFailedEvent.pvc}; goes in the next major. */
  readonly claim: Readonly<V1PersistentVolumeClaim>;
  /** What failed: the provisioner's error, or the controller's when it could not start or save. */
  readonly error: Error;
  /** The provisioning state the attempt left, as the provisioner reported it (`NoChange` if it threw). */
  readonly state: ProvisioningState;
}

/** Payload of `deleted`: the backing asset and the PV object of a released volume were deleted. */
export interface DeletedEvent {
  /** The PV as the controller saw it when it deleted it. */
  readonly pv: Readonly<V1PersistentVolume>;
  /** @deprecated The same object as {@link DeletedEvent.pv}; goes in the next major. */
  readonly volume: Readonly<V1PersistentVolume>;
  /** From the start of the delete attempt until the PV object was deleted, in milliseconds. */
  readonly durationMs: number;
}

/** Payload of `deleteFailed`: one delete attempt for `pv` failed; it is retried. */
export interface DeleteFailedEvent {
  /** The PV as the controller saw it. */
  readonly pv: Readonly<V1PersistentVolume>;
  /** @deprecated The same object as {@link DeleteFailedEvent.pv}; goes in the next major. */
  readonly volume: Readonly<V1PersistentVolume>;
  /** The provisioner's error, or the API server's when the PV or its finalizer could not be changed. */
  readonly error: Error;
}

/** Payload of `synced`: the claim, PV and StorageClass caches have synced and the workers start. */
export interface SyncedEvent {
  /** How long this term waited for the caches, in milliseconds (0 when they were warm already). */
  readonly waitedMs: number;
}

/**
 * Events of a `ProvisionController`, by name, with their payload. Work abandoned because the
 * controller stops for good or no longer leads emits nothing: a successor (or the next term) does it.
 */
export interface ProvisionControllerEvents {
  /** With leader election: this replica acquired the Lease. */
  leading: LeadingEvent;
  /**
   * With leader election: leading ended, after the term's work settled; `reason` tells a requested
   * stop (`stopRequested`) from a lost or lapsed Lease (`leaseLost`).
   */
  stoppedLeading: StoppedLeadingEvent;
  /** The caches synced; emitted once per term (once per `run()` without leader election). */
  synced: SyncedEvent;
  /** A PV was provisioned and saved for a claim; counted in `controller_persistentvolumeclaim_provision_total` too. */
  provisioned: ProvisionedEvent;
  /**
   * A provision attempt failed, including one whose claim was rescheduled (`state` `Reschedule`). A
   * claim skipped (its PV exists, `IgnoredError`, block mode unsupported, a foreign class) emits nothing.
   */
  provisionFailed: ProvisionFailedEvent;
  /** A released PV and its asset were deleted. An `IgnoredError` from `delete` emits nothing. */
  deleted: DeletedEvent;
  /** A delete attempt failed; counted in `controller_persistentvolume_delete_failed_total` too. */
  deleteFailed: DeleteFailedEvent;
}
