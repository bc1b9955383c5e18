import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isIgnoredError, type Provisioner } from '@kube-provisioner/controller';
import { silentLogger } from '@kube-provisioner/controller/logging';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DirectoryProvisioner } from '../src/directory-provisioner.ts';

const context = { signal: new AbortController().signal, assertLeader: () => {}, logger: silentLogger };
let root = '';
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'directory-provisioner-'));
});
afterEach(() => rm(root, { recursive: true, force: true }));

const options = (pvName: string) => ({
  pvName,
  selectedNodeName: '',
  storageClass: { provisioner: 'example.com/directory', reclaimPolicy: 'Retain', mountOptions: ['noatime'] },
  pvc: { spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '2Gi' } } } },
});

describe('DirectoryProvisioner', () => {
  it('creates the directory and returns a PV carrying the claim and class fields, idempotently', async () => {
    // Called through the interface, with the context the controller passes.
    const provisioner: Provisioner = new DirectoryProvisioner(root);
    await provisioner.provision(options('pvc-1'), context);
    const result = await provisioner.provision(options('pvc-1'), context);
    expect((await stat(join(root, 'pvc-1'))).isDirectory()).toBe(true);
    expect(result).toMatchObject({
      pv: {
        metadata: { name: 'pvc-1' },
        spec: {
          capacity: { storage: '2Gi' },
          persistentVolumeReclaimPolicy: 'Retain',
          mountOptions: ['noatime'],
          hostPath: { path: join(root, 'pvc-1') },
        },
      },
    });
  });

  it('removes the directory on delete and ignores volumes outside its root', async () => {
    // Called through the interface, with the context the controller passes.
    const provisioner: Provisioner = new DirectoryProvisioner(root);
    const result = await provisioner.provision(options('pvc-2'), context);
    if (!('pv' in result)) throw result.error;
    await provisioner.delete(result.pv, context);
    await expect(stat(join(root, 'pvc-2'))).rejects.toThrow();
    const foreign = { spec: { hostPath: { path: '/elsewhere/pvc-3' } } };
    await expect(provisioner.delete(foreign, context)).rejects.toSatisfy(isIgnoredError);
  });
});
