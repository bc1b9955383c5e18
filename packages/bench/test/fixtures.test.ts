import type { V1PersistentVolume } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import {
  benchClaim,
  ceilingLabel,
  ceilingVolume,
  foreignPair,
  numberedNames,
  runLabel,
} from '../src/fixtures.ts';

describe('fixtures', () => {
  it('numbers names from zero', () => {
    expect(numberedNames('burst', 3)).toEqual(['burst-0', 'burst-1', 'burst-2']);
  });

  it('gives a claim its class and labels', () => {
    const claim = benchClaim('c', 'ns', 'fast', { [runLabel]: 'r1' });
    expect(claim.spec?.storageClassName).toBe('fast');
    expect(claim.metadata?.labels).toEqual({ [runLabel]: 'r1' });
  });

  it("copies a provisioned PV without its claim, identity or status, labelled as the run's ceiling", () => {
    const template: V1PersistentVolume = {
      metadata: {
        name: 'pvc-1',
        uid: 'u',
        resourceVersion: '9',
        annotations: { 'pv.kubernetes.io/provisioned-by': 'p' },
      },
      spec: {
        capacity: { storage: '1Mi' },
        hostPath: { path: '/r/pvc-1' },
        claimRef: { name: 'c', namespace: 'ns', uid: 'cu' },
      },
      status: { phase: 'Bound' },
    };
    const copy = ceilingVolume(template, 'ceiling-0', 'r1');
    expect(copy.metadata).toEqual({
      name: 'ceiling-0',
      labels: { [runLabel]: 'r1', [ceilingLabel]: 'r1' },
      annotations: { 'pv.kubernetes.io/provisioned-by': 'p' },
    });
    expect(copy.spec).toEqual({ capacity: { storage: '1Mi' }, hostPath: { path: '/r/pvc-1' } });
    expect(copy.status).toBeUndefined();
  });

  it('pre-binds a foreign PV and claim to each other, outside any class', () => {
    const { volume, claim } = foreignPair(7, 'other', 'r1');
    expect(volume.spec?.claimRef).toMatchObject({ namespace: 'other', name: claim.metadata?.name });
    expect(claim.spec?.volumeName).toBe(volume.metadata?.name);
    expect(volume.spec?.storageClassName).toBe('');
    expect(claim.spec?.storageClassName).toBe('');
    expect(volume.spec?.persistentVolumeReclaimPolicy).toBe('Retain');
  });
});
