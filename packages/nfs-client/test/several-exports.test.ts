/**
 * The nfs-client dialect serves several exports as nfs-subdir does (`NFS_EXPORTS`): a class picks its
 * exports, volumes keep nfs-client's layout and archives on their own export, and nfs-subdir's
 * parameters stay refused.
 */
import { mkdir, mkdtemp, readdir, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { OperationContext } from '@kube-provisioner/controller';
import { ApiError } from '@kube-provisioner/controller/client';
import { silentLogger } from '@kube-provisioner/controller/logging';
import { finishedFailure, provisionedVolume } from '@kube-provisioner/controller/testing';
import { SeveralExportsProvisioner } from '@kube-provisioner/nfs-subdir';
import type { V1StorageClass } from '@kubernetes/client-node';
import { expect, it } from 'vitest';

const context: OperationContext = {
  signal: new AbortController().signal,
  assertLeader: () => {},
  logger: silentLogger,
};
const gi = 1024 ** 3;

function storageClass(parameters: Record<string, string>): V1StorageClass {
  return {
    metadata: { name: 'managed-nfs-storage' },
    provisioner: 'fuseim.pri/ifs',
    reclaimPolicy: 'Delete',
    parameters,
  };
}

async function withTwoExports(
  test: (mounts: string, provisioner: SeveralExportsProvisioner, sc: V1StorageClass) => Promise<void>,
  parameters: Record<string, string>,
): Promise<void> {
  const mounts = await realpath(await mkdtemp(join(tmpdir(), 'nfs-client-exports-')));
  try {
    await Promise.all(['a', 'b'].map((name) => mkdir(join(mounts, name))));
    const sc = storageClass(parameters);
    const provisioner = new SeveralExportsProvisioner({
      dialect: 'nfs-client',
      exports: ['a', 'b'].map((name) => ({
        name,
        server: '10.0.0.2',
        path: `/ifs/${name}`,
        mountRoot: join(mounts, name),
      })),
      provisionerName: 'fuseim.pri/ifs',
      classes: {
        async get(name: string): Promise<V1StorageClass> {
          if (name !== sc.metadata?.name) throw new ApiError(404, 'not found', { reason: 'NotFound' });
          return sc;
        },
      },
      // Export `a` has more room: only the class's `exports` sends the volume to `b`.
      statfs: async (path) => ({
        bsize: 4096,
        blocks: (10 * gi) / 4096,
        bavail: (path.endsWith('/a') ? 8 : 1) * (gi / 4096),
      }),
    });
    await test(mounts, provisioner, sc);
  } finally {
    await rm(mounts, { recursive: true, force: true });
  }
}

function options(sc: V1StorageClass) {
  const uid = '6a1f0c9e-2b3d-4e5f-8a9b-0c1d2e3f4a5b';
  return {
    pvc: {
      metadata: { namespace: 'default', name: 'test-claim', uid },
      spec: { accessModes: ['ReadWriteMany'], resources: { requests: { storage: '1Mi' } } },
    },
    storageClass: sc,
    pvName: `pvc-${uid}`,
    selectedNodeName: '',
  };
}

it('places a class’s volumes on the export it names, in nfs-client’s layout, and archives them there', async () => {
  await withTwoExports(
    async (mounts, provisioner, sc) => {
      const pv = provisionedVolume(await provisioner.provision(options(sc), context));
      const dir = `default-test-claim-${pv.metadata?.name}`;
      expect(pv.spec?.nfs).toMatchObject({ server: '10.0.0.2', path: `/ifs/b/${dir}` });
      expect(await readdir(join(mounts, 'b'))).toContain(dir);
      await provisioner.delete(
        {
          ...pv,
          spec: { ...pv.spec, storageClassName: 'managed-nfs-storage' },
          status: { phase: 'Released' },
        },
        context,
      );
      expect(await readdir(join(mounts, 'b'))).toContain(`archived-${dir}`);
      expect(await readdir(join(mounts, 'a'))).toEqual([]);
    },
    { exports: 'b' },
  );
});

it('still refuses nfs-subdir parameters with several exports', async () => {
  await withTwoExports(
    async (_mounts, provisioner, sc) => {
      const error = finishedFailure(await provisioner.provision(options(sc), context), true);
      expect(error.message).toMatch(/unknown parameter "pathPattern"/u);
    },
    { exports: 'a', pathPattern: 'x' },
  );
});
