import { describe, expect, it } from 'vitest';
import { IgnoredError, InfeasibleError } from '../src/index.ts';
import {
  claimFixture,
  finishedFailure,
  operationContext,
  provisionedVolume,
  provisionOptionsFor,
  releasedVolumeFixture,
  storageClassFixture,
} from '../src/testing/index.ts';
import { annDynamicallyProvisioned, annSelectedNode, annStorageProvisioner } from '../src/wire-names.ts';

describe('provision fixtures', () => {
  it('builds distinct pending claims, with the selected node as the scheduler writes it', () => {
    const first = claimFixture();
    const second = claimFixture({ namespace: 'ns', accessModes: ['ReadWriteMany'], selectedNode: 'node-a' });
    expect(first.metadata?.name).not.toBe(second.metadata?.name);
    expect(first.metadata?.uid).not.toBe(second.metadata?.uid);
    expect(first.metadata?.annotations).toEqual({ [annStorageProvisioner]: 'example.com/fixture' });
    expect(first.spec).toEqual({
      storageClassName: 'fixture',
      accessModes: ['ReadWriteOnce'],
      resources: { requests: { storage: '1Gi' } },
    });
    expect(second.metadata).toMatchObject({ namespace: 'ns', annotations: { [annSelectedNode]: 'node-a' } });
    expect(second.spec?.accessModes).toEqual(['ReadWriteMany']);
  });

  it('makes a claim and class that name each other and the harness provisioner, with no extra fields', () => {
    const claim = claimFixture();
    const cls = storageClassFixture();
    expect(claim.spec?.storageClassName).toBe(cls.metadata?.name);
    expect(claim.metadata?.annotations?.[annStorageProvisioner]).toBe(cls.provisioner);
    expect(
      storageClassFixture({ name: 'gold', provisioner: 'example.com/p', reclaimPolicy: 'Retain' }),
    ).toMatchObject({
      metadata: { name: 'gold' },
      provisioner: 'example.com/p',
      reclaimPolicy: 'Retain',
    });
    expect(claimFixture({ storageClassName: 'gold', provisioner: 'example.com/p' })).toMatchObject({
      metadata: { annotations: { [annStorageProvisioner]: 'example.com/p' } },
      spec: { storageClassName: 'gold' },
    });
  });

  it('hands a claim over as the controller does: PV name from its UID, selected node from its annotation', () => {
    const pvc = claimFixture({ uid: 'u-1', selectedNode: 'node-b' });
    const sc = storageClassFixture({
      name: 'fast',
      provisioner: 'example.com/p',
      parameters: { a: 'b' },
      reclaimPolicy: 'Retain',
    });
    expect(sc).toEqual({
      apiVersion: 'storage.k8s.io/v1',
      kind: 'StorageClass',
      metadata: { name: 'fast', uid: 'class-uid' },
      provisioner: 'example.com/p',
      parameters: { a: 'b' },
      reclaimPolicy: 'Retain',
    });
    expect(provisionOptionsFor(pvc, sc)).toEqual({
      pvc,
      storageClass: sc,
      pvName: 'pvc-u-1',
      selectedNodeName: 'node-b',
    });
    expect(operationContext().signal.aborted).toBe(false);
  });

  it('reads results: the PV of a success, the error of a Finished failure of the expected kind', () => {
    const pv = { metadata: { name: 'pv' } };
    const infeasible = new InfeasibleError('bad');
    expect(provisionedVolume({ pv })).toBe(pv);
    expect(() => provisionedVolume({ error: infeasible, state: 'Finished' })).toThrow(infeasible);
    expect(finishedFailure({ error: infeasible, state: 'Finished' }, true)).toBe(infeasible);
    expect(() => finishedFailure({ error: infeasible, state: 'Finished' }, false)).toThrow(/feasible error/u);
    expect(() => finishedFailure({ error: new IgnoredError('x'), state: 'NoChange' }, false)).toThrow(
      /state Finished, got NoChange/u,
    );
    expect(() => finishedFailure({ pv }, false)).toThrow(/got PV pv/u);
  });

  it('releases a PV as the API server shows it, with only the fields asked for', () => {
    const pvc = claimFixture({ namespace: 'ns', name: 'data', uid: 'u-2' });
    const released = releasedVolumeFixture(
      { metadata: { name: 'pv', annotations: { keep: 'me' } }, spec: { capacity: { storage: '1Gi' } } },
      { provisioner: 'example.com/p', claim: pvc },
    );
    expect(released).toEqual({
      metadata: { name: 'pv', annotations: { keep: 'me', [annDynamicallyProvisioned]: 'example.com/p' } },
      spec: {
        capacity: { storage: '1Gi' },
        claimRef: { kind: 'PersistentVolumeClaim', namespace: 'ns', name: 'data', uid: 'u-2' },
      },
      status: { phase: 'Released' },
    });
    const byClass = releasedVolumeFixture({ spec: {} }, { provisioner: 'p', storageClassName: 'fast' });
    expect(byClass.spec).toEqual({ storageClassName: 'fast' });
  });
});
