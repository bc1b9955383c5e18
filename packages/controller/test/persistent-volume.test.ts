import type { V1PersistentVolumeClaim, V1StorageClass } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { persistentVolumeFor } from '../src/index.ts';

const pvc: V1PersistentVolumeClaim = {
  spec: { accessModes: ['ReadWriteMany'], resources: { requests: { storage: '2Gi' } }, volumeMode: 'Block' },
};
const storageClass: V1StorageClass = { provisioner: 'example.com/x', mountOptions: ['nfsvers=4.1'] };

describe('persistentVolumeFor', () => {
  it('takes size and access modes from the claim and reclaim policy and mount options from the class', () => {
    const pv = persistentVolumeFor(
      { pvName: 'pvc-1', pvc, storageClass },
      { nfs: { server: 's', path: '/p' } },
    );
    expect(pv).toEqual({
      apiVersion: 'v1',
      kind: 'PersistentVolume',
      metadata: { name: 'pvc-1' },
      spec: {
        capacity: { storage: '2Gi' },
        accessModes: ['ReadWriteMany'],
        persistentVolumeReclaimPolicy: 'Delete',
        volumeMode: 'Filesystem',
        mountOptions: ['nfsvers=4.1'],
        nfs: { server: 's', path: '/p' },
      },
    });
  });

  it('copies arrays, so the PV shares nothing with the claim and class', () => {
    const pv = persistentVolumeFor({ pvName: 'pvc-1', pvc, storageClass }, {});
    expect(pv.spec?.accessModes).not.toBe(pvc.spec?.accessModes);
    expect(pv.spec?.mountOptions).not.toBe(storageClass.mountOptions);
  });

  it('keeps the class reclaim policy, omits empty mount options and a missing size', () => {
    const pv = persistentVolumeFor(
      {
        pvName: 'pvc-2',
        pvc: { spec: {} },
        storageClass: { provisioner: 'p', reclaimPolicy: 'Retain', mountOptions: [] },
      },
      {},
    );
    expect(pv.spec).toEqual({
      capacity: {},
      accessModes: [],
      persistentVolumeReclaimPolicy: 'Retain',
      volumeMode: 'Filesystem',
    });
  });

  it('adds annotations, and lets the given spec override the common fields', () => {
    const pv = persistentVolumeFor(
      { pvName: 'pvc-3', pvc, storageClass },
      { volumeMode: 'Block' },
      { a: 'b' },
    );
    expect(pv.metadata).toEqual({ name: 'pvc-3', annotations: { a: 'b' } });
    expect(pv.spec?.volumeMode).toBe('Block');
  });
});
