// biome-ignore-all lint/suspicious/noTemplateCurlyInString: pathPattern placeholders are literal text, not JS templates
import { mkdir, mkdtemp, readdir, realpath, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { OperationContext } from '@kube-provisioner/controller';
import { ApiError } from '@kube-provisioner/controller/client';
import { silentLogger } from '@kube-provisioner/controller/logging';
import { createNfsClientProvisioner } from '@kube-provisioner/nfs-client';
import type { V1PersistentVolume, V1StorageClass } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';

const context: OperationContext = {
  signal: new AbortController().signal,
  assertLeader: () => {},
  logger: silentLogger,
};
const uid = '0b9f6d1e-8c1a-4b8e-9f3e-0a1b2c3d4e5f';
const pvName = `pvc-${uid}`;
const dir = `default-test-claim-${pvName}`;

function storageClass(parameters?: Record<string, string>): V1StorageClass {
  return {
    metadata: { name: 'managed-nfs-storage', uid: 'class-uid' },
    provisioner: 'fuseim.pri/ifs',
    reclaimPolicy: 'Delete',
    ...(parameters === undefined ? {} : { parameters }),
  };
}

async function withMount(test: (mountRoot: string) => Promise<void>): Promise<void> {
  const mountRoot = await realpath(await mkdtemp(join(tmpdir(), 'nfs-client-test-')));
  try {
    await test(mountRoot);
  } finally {
    await rm(mountRoot, { recursive: true, force: true });
  }
}

function provisioner(mountRoot: string, ...classes: V1StorageClass[]) {
  return createNfsClientProvisioner({
    server: '10.0.0.2',
    exportPath: '/ifs/kubernetes',
    mountRoot,
    provisionerName: 'fuseim.pri/ifs',
    classes: {
      async get(name: string): Promise<V1StorageClass> {
        const found = classes.find((sc) => sc.metadata?.name === name);
        if (found === undefined) throw new ApiError(404, 'not found', { reason: 'NotFound' });
        return found;
      },
    },
  });
}

function provisionOptions(sc: V1StorageClass) {
  return {
    pvc: {
      metadata: { namespace: 'default', name: 'test-claim', uid },
      spec: { accessModes: ['ReadWriteMany'], resources: { requests: { storage: '1Mi' } } },
    },
    storageClass: sc,
    pvName,
    selectedNodeName: '',
  };
}

function released(pv: V1PersistentVolume): V1PersistentVolume {
  return {
    ...pv,
    spec: { ...pv.spec, storageClassName: 'managed-nfs-storage' },
    status: { phase: 'Released' },
  };
}

describe('createNfsClientProvisioner', () => {
  it('lays volumes out as nfs-client did and archives them to archived-<dir> by default', async () => {
    await withMount(async (mountRoot) => {
      const nfs = provisioner(mountRoot);
      const result = await nfs.provision(provisionOptions(storageClass()), context);
      if ('error' in result) throw result.error;
      expect(result.pv.spec?.nfs).toEqual({
        server: '10.0.0.2',
        path: `/ifs/kubernetes/${dir}`,
        readOnly: false,
      });
      expect((await stat(join(mountRoot, dir))).mode & 0o777).toBe(0o777);

      await nfs.delete(released(result.pv), context);
      expect((await readdir(mountRoot)).filter((name) => !name.startsWith('.'))).toEqual([`archived-${dir}`]);
    });
  });

  it('deletes with archiveOnDelete "false"', async () => {
    await withMount(async (mountRoot) => {
      const nfs = provisioner(mountRoot);
      const result = await nfs.provision(
        provisionOptions(storageClass({ archiveOnDelete: 'false' })),
        context,
      );
      if ('error' in result) throw result.error;
      await nfs.delete(released(result.pv), context);
      expect(await readdir(mountRoot)).toEqual([]);
    });
  });

  it('refuses nfs-subdir parameters with a message naming the accepted ones', async () => {
    await withMount(async (mountRoot) => {
      const result = await provisioner(mountRoot).provision(
        provisionOptions(storageClass({ pathPattern: '${.PVC.name}' })),
        context,
      );
      expect('error' in result && result.error.message).toBe(
        'invalid StorageClass parameters: unknown parameter "pathPattern": accepted parameters: archiveOnDelete, archiveRetention, takeBackFromNamespaces, cloneSpecialFiles, snapshotsPerClaim, snapshotRetention',
      );
      expect(await readdir(mountRoot)).toEqual([]);
    });
  });

  it('deletes a volume of the upstream image as it would, reading archiveOnDelete from the live class', async () => {
    await withMount(async (mountRoot) => {
      await mkdir(join(mountRoot, dir));
      const upstream: V1PersistentVolume = {
        metadata: {
          name: pvName,
          annotations: {
            'pv.kubernetes.io/provisioned-by': 'fuseim.pri/ifs',
            'volume.beta.kubernetes.io/storage-class': 'managed-nfs-storage',
          },
        },
        spec: {
          nfs: { server: '10.0.0.2', path: `/ifs/kubernetes/${dir}` },
          persistentVolumeReclaimPolicy: 'Delete',
        },
        status: { phase: 'Released' },
      };
      await provisioner(mountRoot, storageClass({ archiveOnDelete: 'false' })).delete(upstream, context);
      expect(await readdir(mountRoot)).toEqual([]);
    });
  });
});
