/**
 * Two upstream releases, one export each, merged into one installation with `NFS_EXPORTS`, as
 * docs/migrating-from-nfs-subdir.md describes: the second release's PVs are left alone until they are
 * re-annotated with the remaining provisioner name, then deleted on the export that holds them; its
 * class, re-created with `exports`, keeps sending claims to its own export.
 */
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { ProvisionController } from '@kube-provisioner/controller';
import { resources } from '@kube-provisioner/controller/client';
import { silentLogger } from '@kube-provisioner/controller/logging';
import { FakeKubeApi } from '@kube-provisioner/controller/testing';
import { annDynamicallyProvisioned, annStorageProvisioner } from '@kube-provisioner/controller/wire-names';
import type { V1PersistentVolume, V1StorageClass } from '@kubernetes/client-node';
import { describe, expect, it, vi } from 'vitest';
import { claim, provisionerName, storageClass } from './fixtures.ts';
import { gi, type TwoExports, twoExports } from './several-exports-fixtures.ts';

/** The provisioner name of the second upstream release (the chart's `cluster.local/<fullname>`). */
const otherRelease = 'cluster.local/nfs-b-nfs-subdir-external-provisioner';

const eventually = <T>(check: () => T | Promise<T>): Promise<T> =>
  vi.waitFor(check, { timeout: 5000, interval: 10 });

/** Class `name` of the merged installation, as the API server holds it. */
function mergedClass(name: string, parameters: Record<string, string>): V1StorageClass {
  const sc = storageClass(parameters);
  return { ...sc, apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', metadata: { name } };
}

/**
 * A released PV as an upstream release made it: no ownership record, its directory
 * `<ns>-<pvc>-<pv>` in the export root, `provisioner` in its provisioned-by annotation.
 */
async function upstreamVolume(
  two: TwoExports,
  exportName: string,
  provisioner: string,
  pvName: string,
): Promise<{ pv: V1PersistentVolume; directory: string }> {
  const leaf = `team-data-${pvName}`;
  const directory = join(two.mount(exportName), leaf);
  await mkdir(directory, { mode: 0o777 });
  const pv: V1PersistentVolume = {
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: { name: pvName, annotations: { [annDynamicallyProvisioned]: provisioner } },
    spec: {
      capacity: { storage: '1Gi' },
      accessModes: ['ReadWriteMany'],
      persistentVolumeReclaimPolicy: 'Delete',
      storageClassName: `nfs-${exportName}`,
      nfs: { server: 'nfs.example.com', path: `/srv/${exportName}/${leaf}` },
      claimRef: { kind: 'PersistentVolumeClaim', namespace: 'team', name: 'data', uid: `uid-${pvName}` },
    },
    status: { phase: 'Released' },
  };
  return { pv, directory };
}

async function withMergedInstall(test: (api: FakeKubeApi, two: TwoExports) => Promise<void>): Promise<void> {
  const api = new FakeKubeApi();
  // Export `a` has far more room: placement by free space alone would pick it.
  const two = await twoExports({ a: 9 * gi, b: 2 * gi }, { classes: api.resource(resources.storageClasses) });
  await using _ = two.dir;
  api.seed(resources.storageClasses, mergedClass('nfs-a', { exports: 'a', archiveOnDelete: 'false' }));
  // The second release's class, re-created under its name with the merged provisioner and its export.
  api.seed(resources.storageClasses, mergedClass('nfs-b', { exports: 'b', archiveOnDelete: 'false' }));
  const controller = new ProvisionController({
    api,
    provisionerName,
    provisioner: two.provisioner,
    leaderElection: false,
    logger: silentLogger,
  });
  const stop = new AbortController();
  const done = controller.run(stop.signal);
  try {
    await test(api, two);
  } finally {
    stop.abort();
    await done;
  }
}

describe('two upstream releases merged into one installation', () => {
  it('deletes the other release’s volumes on their own export once re-annotated, not before', async () => {
    await withMergedInstall(async (api, two) => {
      const own = await upstreamVolume(two, 'a', provisionerName, 'pvc-own');
      const other = await upstreamVolume(two, 'b', otherRelease, 'pvc-other');
      api.seed(resources.persistentVolumes, own.pv);
      api.seed(resources.persistentVolumes, other.pv);

      // Both arrive in the same list: once the own release's volume is gone, the other's was seen and left.
      await eventually(() =>
        expect(api.objects(resources.persistentVolumes).map((pv) => pv.metadata?.name)).toEqual([
          'pvc-other',
        ]),
      );
      expect(existsSync(own.directory)).toBe(false);
      expect(existsSync(other.directory)).toBe(true);

      const volumes = api.resource(resources.persistentVolumes);
      const current = await volumes.get('pvc-other');
      await volumes.update({
        ...current,
        metadata: {
          ...current.metadata,
          annotations: { ...current.metadata?.annotations, [annDynamicallyProvisioned]: provisionerName },
        },
      });
      await eventually(() => expect(api.objects(resources.persistentVolumes)).toEqual([]));
      expect(existsSync(other.directory)).toBe(false);
    });
  });

  it('places the re-created class’s claims on its own export though the other has more room', async () => {
    await withMergedInstall(async (api) => {
      const pending = claim({ namespace: 'team', name: 'logs' });
      api.seed(resources.persistentVolumeClaims, {
        ...pending,
        apiVersion: 'v1',
        kind: 'PersistentVolumeClaim',
        metadata: { ...pending.metadata, annotations: { [annStorageProvisioner]: provisionerName } },
        spec: { ...pending.spec, storageClassName: 'nfs-b' },
      });
      const [pv] = await eventually(() => {
        const made = api.objects(resources.persistentVolumes);
        expect(made).toHaveLength(1);
        return made;
      });
      expect(pv?.spec?.nfs?.path).toMatch(/^\/srv\/b\/team-logs-pvc-/u);
    });
  });
});
