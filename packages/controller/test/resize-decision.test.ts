import type { V1PersistentVolume, V1PersistentVolumeClaim } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import {
  type ClaimResourceStatus,
  failedPatch,
  finishedPatch,
  inProgressPatch,
  resizeDecision,
} from '../src/internal/resize-decision.ts';

interface ClaimState {
  readonly request: string;
  readonly capacity?: string;
  readonly allocated?: string;
  readonly status?: ClaimResourceStatus;
  readonly conditions?: { type: string; status: string }[];
}

function claim(state: ClaimState): V1PersistentVolumeClaim {
  return {
    metadata: { name: 'c', namespace: 'ns', uid: 'claim-uid', resourceVersion: '7' },
    spec: { volumeName: 'pv', resources: { requests: { storage: state.request } } },
    status: {
      phase: 'Bound',
      capacity: { storage: state.capacity ?? '1Gi' },
      ...(state.allocated === undefined ? {} : { allocatedResources: { storage: state.allocated } }),
      ...(state.status === undefined ? {} : { allocatedResourceStatuses: { storage: state.status } }),
      ...(state.conditions === undefined ? {} : { conditions: state.conditions }),
    },
  };
}

function volume(capacity: string, claimUid = 'claim-uid'): V1PersistentVolume {
  return {
    metadata: { name: 'pv' },
    spec: { capacity: { storage: capacity }, claimRef: { namespace: 'ns', name: 'c', uid: claimUid } },
  };
}

describe('resizeDecision', () => {
  it('expands a bound claim that asks for more than its capacity, recording the size first', () => {
    expect(resizeDecision(claim({ request: '2Gi' }), volume('1Gi'), false)).toEqual({
      kind: 'expand',
      capacity: '2Gi',
      markInProgress: true,
    });
  });

  it('does nothing for a claim that asks for no more than its capacity, or is not bound to the volume', () => {
    expect(resizeDecision(claim({ request: '1Gi' }), volume('1Gi'), false).kind).toBe('none');
    expect(resizeDecision(claim({ request: '2Gi' }), volume('1Gi', 'other'), false).kind).toBe('none');
    const pending = { ...claim({ request: '2Gi' }), status: { phase: 'Pending' } };
    expect(resizeDecision(pending, volume('1Gi'), false).kind).toBe('none');
  });

  it('finishes an attempt that may still run before taking a lowered request', () => {
    const interrupted = claim({ request: '3Gi', allocated: '10Gi', status: 'ControllerResizeInProgress' });
    expect(resizeDecision(interrupted, volume('1Gi'), false)).toEqual({
      kind: 'expand',
      capacity: '10Gi',
      markInProgress: false,
    });
  });

  it('starts over from the request once the last attempt failed for good (recovery)', () => {
    const failed = claim({ request: '3Gi', allocated: '10Gi', status: 'ControllerResizeInProgress' });
    expect(resizeDecision(failed, volume('1Gi'), true)).toEqual({
      kind: 'expand',
      capacity: '3Gi',
      markInProgress: true,
    });
  });

  it('waits for a new request after an infeasible one, then takes it', () => {
    const infeasible = { request: '10Gi', allocated: '10Gi', status: 'ControllerResizeInfeasible' } as const;
    expect(resizeDecision(claim(infeasible), volume('1Gi'), true).kind).toBe('none');
    expect(resizeDecision(claim({ ...infeasible, request: '3Gi' }), volume('1Gi'), true)).toEqual({
      kind: 'expand',
      capacity: '3Gi',
      markInProgress: true,
    });
  });

  it('only records the capacity when the volume already holds the size', () => {
    const behind = claim({ request: '2Gi', allocated: '2Gi', status: 'ControllerResizeInProgress' });
    expect(resizeDecision(behind, volume('2Gi'), false)).toEqual({ kind: 'record', capacity: '2Gi' });
  });

  it('never shrinks: a volume larger than the target is recorded as it is', () => {
    expect(resizeDecision(claim({ request: '2Gi' }), volume('5Gi'), false)).toEqual({
      kind: 'record',
      capacity: '5Gi',
      shrinkFrom: '2Gi',
    });
  });

  it('leaves a pending node expansion to the node', () => {
    const pending = claim({ request: '2Gi', allocated: '2Gi', status: 'NodeResizePending' });
    expect(resizeDecision(pending, volume('2Gi'), false).kind).toBe('none');
  });
});

describe('claim status patches', () => {
  const now = new Date('2026-01-02T03:04:05Z');
  const other = { type: 'ModifyingVolume', status: 'True' };

  it('marks the claim in progress, guarded by its resourceVersion, replacing old resize conditions', () => {
    const old = claim({
      request: '2Gi',
      conditions: [other, { type: 'ControllerResizeError', status: 'True' }],
    });
    expect(inProgressPatch(old, '2Gi', now)).toEqual({
      metadata: { resourceVersion: '7' },
      status: {
        allocatedResources: { storage: '2Gi' },
        allocatedResourceStatuses: { storage: 'ControllerResizeInProgress' },
        conditions: [other, { type: 'Resizing', status: 'True', lastTransitionTime: now }],
      },
    });
  });

  it('finishes with the capacity, no resize status and no resize condition', () => {
    const resizing = claim({ request: '2Gi', conditions: [{ type: 'Resizing', status: 'True' }, other] });
    expect(finishedPatch(resizing, '2Gi')).toEqual({
      metadata: { resourceVersion: '7' },
      status: {
        capacity: { storage: '2Gi' },
        allocatedResourceStatuses: { storage: null },
        conditions: [other],
      },
    });
  });

  it('records a failure with a condition, keeping the Resizing one; infeasible also as a status', () => {
    const resizing = claim({ request: '2Gi', conditions: [{ type: 'Resizing', status: 'True' }] });
    const condition = {
      type: 'ControllerResizeError',
      status: 'True',
      lastTransitionTime: now,
      message: 'failed to expand pvc with no space',
    };
    expect(failedPatch(resizing, new Error('no space'), false, now)).toEqual({
      status: { conditions: [{ type: 'Resizing', status: 'True' }, condition] },
    });
    expect(failedPatch(resizing, new Error('no space'), true, now).status.allocatedResourceStatuses).toEqual({
      storage: 'ControllerResizeInfeasible',
    });
  });
});
