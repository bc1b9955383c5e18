/**
 * Volume expansion without I/O: what a bound claim needs (external-resizer's `expandAndRecover`, for a
 * controller-only expansion) and the claim status patches that record it. The status values, the
 * condition types and the recovery rules are external-resizer's, so `kubectl describe` and tools
 * that read them see the same as with a CSI driver.
 */
import type {
  V1PersistentVolume,
  V1PersistentVolumeClaim,
  V1PersistentVolumeClaimCondition,
} from '@kubernetes/client-node';
import { compareQuantities } from '../client/quantity.ts';

/** The `allocatedResourceStatuses` values of the API (`ClaimResourceStatus`). */
export type ClaimResourceStatus =
  | 'ControllerResizeInProgress'
  | 'ControllerResizeInfeasible'
  | 'NodeResizePending'
  | 'NodeResizeInProgress'
  | 'NodeResizeInfeasible';

/**
 * What to do for a claim:
 * - `none`: nothing to expand (not a resize, or one only the claim's owner can unblock);
 * - `expand`: call `expand` for `capacity`, first recording it as allocated when `markInProgress`;
 * - `record`: the volume already holds `capacity` (its PV's), at least the target: only the claim's
 *   status is behind. `shrinkFrom` is set when the target was smaller: volumes are never shrunk.
 */
export type ResizeDecision =
  | { readonly kind: 'none'; readonly reason: string }
  | { readonly kind: 'expand'; readonly capacity: string; readonly markInProgress: boolean }
  | { readonly kind: 'record'; readonly capacity: string; readonly shrinkFrom?: string };

/** Condition types that belong to a resize (external-resizer's `knownResizeConditions`). */
const resizeConditions: ReadonlySet<string> = new Set([
  'Resizing',
  'FileSystemResizePending',
  'ControllerResizeError',
  'NodeResizeError',
]);

const none = (reason: string): ResizeDecision => ({ kind: 'none', reason });

/**
 * The resize `claim` needs from its bound `pv`. `lastErrorFinal` says the previous `expand` for this
 * claim failed with nothing left running: only then may a `ControllerResizeInProgress` claim whose
 * request was lowered start over from the new request (recovery from a failed expansion).
 */
export function resizeDecision(
  claim: Readonly<V1PersistentVolumeClaim>,
  pv: Readonly<V1PersistentVolume>,
  lastErrorFinal: boolean,
): ResizeDecision {
  const request = claim.spec?.resources?.requests?.storage;
  if (claim.status?.phase !== 'Bound' || !claim.spec?.volumeName || request === undefined) {
    return none('the claim is not bound');
  }
  if (compareQuantities(request, claim.status.capacity?.storage) <= 0)
    return none('no larger size requested');
  const ref = pv.spec?.claimRef;
  if (ref?.uid !== claim.metadata?.uid || ref?.namespace !== claim.metadata?.namespace) {
    return none('the volume is not bound to the claim');
  }
  const pvSize = pv.spec?.capacity?.storage ?? '0';
  const status = claim.status.allocatedResourceStatuses?.storage as ClaimResourceStatus | undefined;
  const allocated = claim.status.allocatedResources?.storage;
  if (status === 'NodeResizePending' || status === 'NodeResizeInProgress') {
    if (compareQuantities(pvSize, allocated ?? request) >= 0) return none('node expansion is pending');
  }
  const target = targetSize(status, request, allocated, lastErrorFinal);
  if (
    status === 'ControllerResizeInfeasible' &&
    allocated !== undefined &&
    compareQuantities(allocated, target) === 0
  ) {
    return none('expansion to this size was infeasible; waiting for another request');
  }
  const order = compareQuantities(target, pvSize);
  if (order < 0) return { kind: 'record', capacity: pvSize, shrinkFrom: target };
  if (order === 0) return { kind: 'record', capacity: pvSize };
  const markInProgress =
    status !== 'ControllerResizeInProgress' ||
    allocated === undefined ||
    compareQuantities(allocated, target) !== 0;
  return { kind: 'expand', capacity: target, markInProgress };
}

/**
 * The size to expand to: an attempt that may still run on the backend is finished first (its
 * `allocatedResources`), otherwise the claim's request as it is now.
 */
function targetSize(
  status: ClaimResourceStatus | undefined,
  request: string,
  allocated: string | undefined,
  lastErrorFinal: boolean,
): string {
  switch (status) {
    case 'ControllerResizeInProgress':
      return lastErrorFinal ? request : (allocated ?? request);
    case 'NodeResizePending':
    case 'NodeResizeInProgress':
    case 'NodeResizeInfeasible':
      return allocated ?? request;
    case 'ControllerResizeInfeasible':
      return request;
    default:
      // An allocation without a status is an interrupted attempt of an API server without recovery.
      return allocated ?? request;
  }
}

/** The claim's conditions with its resize conditions replaced by `added` (kept too with `keepOld`). */
function mergeResizeConditions(
  claim: Readonly<V1PersistentVolumeClaim>,
  added: readonly V1PersistentVolumeClaimCondition[],
  keepOld: boolean,
): V1PersistentVolumeClaimCondition[] {
  const types = new Set(added.map((condition) => condition.type));
  const kept = (claim.status?.conditions ?? []).filter(
    (condition) => !resizeConditions.has(condition.type) || (keepOld && !types.has(condition.type)),
  );
  return [...kept, ...added];
}

/** A merge patch of the claim's status, guarded by its resourceVersion when `guarded`. */
export interface ClaimStatusPatch {
  readonly metadata?: { readonly resourceVersion: string };
  readonly status: Record<string, unknown>;
}

const guard = (claim: Readonly<V1PersistentVolumeClaim>) => ({
  metadata: { resourceVersion: claim.metadata?.resourceVersion ?? '' },
});

/** Marks the claim `ControllerResizeInProgress` for `capacity`, with a `Resizing` condition. */
export function inProgressPatch(
  claim: Readonly<V1PersistentVolumeClaim>,
  capacity: string,
  now: Date,
): ClaimStatusPatch {
  const resizing = { type: 'Resizing', status: 'True', lastTransitionTime: now };
  return {
    ...guard(claim),
    status: {
      allocatedResources: { storage: capacity },
      allocatedResourceStatuses: { storage: 'ControllerResizeInProgress' },
      conditions: mergeResizeConditions(claim, [resizing], false),
    },
  };
}

/** Records `capacity` as the claim's capacity and ends the resize: no status, no resize condition. */
export function finishedPatch(claim: Readonly<V1PersistentVolumeClaim>, capacity: string): ClaimStatusPatch {
  return {
    ...guard(claim),
    status: {
      capacity: { storage: capacity },
      allocatedResourceStatuses: { storage: null },
      conditions: mergeResizeConditions(claim, [], false),
    },
  };
}

/**
 * Records a failed `expand` with a `ControllerResizeError` condition; an infeasible one also as
 * `ControllerResizeInfeasible`. Not guarded, as in external-resizer: the failure must be recorded even
 * when the cached claim is slightly old.
 */
export function failedPatch(
  claim: Readonly<V1PersistentVolumeClaim>,
  error: Error,
  infeasible: boolean,
  now: Date,
): ClaimStatusPatch {
  const condition = {
    type: 'ControllerResizeError',
    status: 'True',
    lastTransitionTime: now,
    message: `failed to expand pvc with ${error.message}`,
  };
  return {
    status: {
      ...(infeasible ? { allocatedResourceStatuses: { storage: 'ControllerResizeInfeasible' } } : {}),
      conditions: mergeResizeConditions(claim, [condition], true),
    },
  };
}
