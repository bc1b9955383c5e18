import { describe, expect, it } from 'vitest';
import {
  addFinalizer,
  isProvisionerForVolume,
  isVolumeDeletable,
  removeFinalizer,
} from '../src/internal/volume-policy.ts';
import { annDynamicallyProvisioned, annMigratedTo, finalizerPV } from '../src/wire-names.ts';
import { newVolume } from './controller-fixtures.ts';

const known = new Set(['foo.bar/baz']);
const ours = { [annDynamicallyProvisioned]: 'foo.bar/baz' };
const now = new Date();

describe('TestShouldDelete', () => {
  const cases: [string, ReturnType<typeof newVolume>, boolean][] = [
    ['should delete', newVolume('v', 'Released', 'Delete', ours), true],
    ['volume still bound', newVolume('v', 'Bound', 'Delete', ours), false],
    ['non-delete reclaim policy', newVolume('v', 'Released', 'Retain', ours), false],
    [
      'non-nil deletion timestamp',
      newVolume('v', 'Released', 'Delete', ours, { deletionTimestamp: now }),
      false,
    ],
    ['nil deletion timestamp', newVolume('v', 'Released', 'Delete', ours), true],
    ['migrated to', newVolume('v', 'Released', 'Delete', { ...ours, [annMigratedTo]: 'foo.bar/baz' }), true],
    ["failed: shouldn't delete", newVolume('v', 'Failed', 'Delete', ours), false],
  ];
  for (const [title, volume, expected] of cases) {
    it(title, () => expect(isVolumeDeletable(volume, false)).toBe(expected));
  }
});

describe('TestShouldDeleteWithFinalizer', () => {
  const cases: [string, ReturnType<typeof newVolume>, boolean][] = [
    [
      'should delete with finalizer present and no deletionTimestamp',
      newVolume('v', 'Released', 'Delete', ours, { finalizers: [finalizerPV] }),
      true,
    ],
    [
      'should delete with finalizer present and with deletionTimestamp',
      newVolume('v', 'Released', 'Delete', ours, { finalizers: [finalizerPV], deletionTimestamp: now }),
      true,
    ],
    [
      'should not delete when volume still bound and the finalizer exists with no deletionTimestamp',
      newVolume('v', 'Bound', 'Delete', ours, { finalizers: [finalizerPV] }),
      false,
    ],
    [
      'should not delete for non-delete reclaim policy',
      newVolume('v', 'Released', 'Retain', ours, { finalizers: [finalizerPV] }),
      false,
    ],
    [
      'should not delete once our finalizer is gone and deletion started',
      newVolume('v', 'Released', 'Delete', ours, { deletionTimestamp: now }),
      false,
    ],
  ];
  for (const [title, volume, expected] of cases) {
    it(title, () => expect(isVolumeDeletable(volume, true)).toBe(expected));
  }
});

describe('TestIsProvisionerForVolume', () => {
  const cases: [string, ReturnType<typeof newVolume>, boolean][] = [
    ['known dynamically provisioned in-tree volume', newVolume('v', 'Bound', 'Delete', ours), true],
    [
      'known dynamically provisioned in-tree migrated volume',
      newVolume('v', 'Bound', 'Delete', {
        [annDynamicallyProvisioned]: 'kubernetes.io/x',
        [annMigratedTo]: 'foo.bar/baz',
      }),
      true,
    ],
    [
      'unknown dynamically provisioned in-tree volume',
      newVolume('v', 'Bound', 'Delete', { [annDynamicallyProvisioned]: 'kubernetes.io/x' }),
      false,
    ],
    [
      'unknown dynamically provisioned in-tree migrated volume',
      newVolume('v', 'Bound', 'Delete', {
        [annDynamicallyProvisioned]: 'kubernetes.io/x',
        [annMigratedTo]: 'other',
      }),
      false,
    ],
    [
      'known dynamically provisioned csi volume',
      newVolume('v', 'Bound', 'Delete', ours, { csiDriver: 'foo.bar/baz' }),
      true,
    ],
    [
      'unknown dynamically provisioned csi volume',
      newVolume('v', 'Bound', 'Delete', { [annDynamicallyProvisioned]: 'other' }, { csiDriver: 'other' }),
      false,
    ],
    [
      'known statically provisioned csi volume',
      newVolume('v', 'Bound', 'Delete', {}, { csiDriver: 'foo.bar/baz' }),
      true,
    ],
    [
      'unknown statically provisioned csi volume',
      newVolume('v', 'Bound', 'Delete', {}, { csiDriver: 'other' }),
      false,
    ],
    [
      'statically provisioned in-tree volume always return false',
      newVolume('v', 'Bound', 'Delete', {}),
      false,
    ],
    [
      'known statically provisioned in-tree migrate volume',
      newVolume('v', 'Bound', 'Delete', { [annMigratedTo]: 'foo.bar/baz' }),
      true,
    ],
    [
      'unknown statically provisioned in-tree migrate volume',
      newVolume('v', 'Bound', 'Delete', { [annMigratedTo]: 'other' }),
      false,
    ],
  ];
  for (const [title, volume, expected] of cases) {
    it(title, () => expect(isProvisionerForVolume(volume, known)).toBe(expected));
  }
});

describe('TestRemoveFinalizer', () => {
  it('ensure the finalizer removal returns nil finalizers and modified', () =>
    expect(removeFinalizer([finalizerPV], finalizerPV)).toEqual({ finalizers: [], modified: true }));
  it('if finalizer does not exist then it should not be modified', () =>
    expect(removeFinalizer(['a'], finalizerPV)).toEqual({ finalizers: ['a'], modified: false }));
  it('remove only the finalizerToAdd from multiple finalizers', () =>
    expect(removeFinalizer(['a', finalizerPV, 'b'], finalizerPV)).toEqual({
      finalizers: ['a', 'b'],
      modified: true,
    }));
  it('no modified if the original finalizer is empty', () =>
    expect(removeFinalizer([], finalizerPV)).toEqual({ finalizers: [], modified: false }));
  it('remove from nil finalizer', () =>
    expect(removeFinalizer(undefined, finalizerPV)).toEqual({ finalizers: [], modified: false }));
  it('never mutates the input list', () => {
    const input = Object.freeze([finalizerPV, 'a']);
    removeFinalizer(input, finalizerPV);
    expect(input).toEqual([finalizerPV, 'a']);
  });
});

describe('TestAddFinalizer', () => {
  it('if finalizer already exists then no modification needed', () =>
    expect(addFinalizer([finalizerPV], finalizerPV)).toEqual({ finalizers: [finalizerPV], modified: false }));
  it('if original finalizer is nil then return with finalizer to add', () =>
    expect(addFinalizer(undefined, finalizerPV)).toEqual({ finalizers: [finalizerPV], modified: true }));
  it('if original finalizer is empty then return with finalizer to add', () =>
    expect(addFinalizer([], finalizerPV)).toEqual({ finalizers: [finalizerPV], modified: true }));
  it('ensure finalizers are appended to existing finalizer', () =>
    expect(addFinalizer(['a'], finalizerPV)).toEqual({ finalizers: ['a', finalizerPV], modified: true }));
});
