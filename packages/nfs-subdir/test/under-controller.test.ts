// biome-ignore-all lint/suspicious/noTemplateCurlyInString: pathPattern placeholders are literal text, not JS templates
/** The provisioner driven by a real ProvisionController on the fake API: events, PVs and Delete. */
import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { ProvisionController } from '@kube-provisioner/controller';
import { resources } from '@kube-provisioner/controller/client';
import { silentLogger } from '@kube-provisioner/controller/logging';
import { FakeKubeApi } from '@kube-provisioner/controller/testing';
import { annStorageProvisioner } from '@kube-provisioner/controller/wire-names';
import type { V1PersistentVolumeClaim } from '@kubernetes/client-node';
import { Registry } from 'prom-client';
import { describe, expect, it, vi } from 'vitest';
import { ArchiveMetrics, archiveMetricNames } from '../src/archive-metrics.ts';
import { annOnDelete } from '../src/delete-policy.ts';
import { NfsProvisioner } from '../src/nfs-provisioner.ts';
import { claim, provisionerName, server, storageClass, temporaryRoot } from './fixtures.ts';

async function withController(
  mountRoot: string,
  test: (api: FakeKubeApi) => Promise<void>,
  maintenanceIntervalMs?: number,
  archiveMetrics?: ArchiveMetrics,
): Promise<void> {
  const api = new FakeKubeApi();
  const controller = new ProvisionController({
    ...(maintenanceIntervalMs === undefined ? {} : { maintenanceIntervalMs }),
    api,
    provisionerName,
    provisioner: new NfsProvisioner({
      dialect: 'nfs-subdir',
      server,
      exportPath: '/export',
      mountRoot,
      provisionerName,
      classes: api.resource(resources.storageClasses),
      archiveMetrics,
    }),
    leaderElection: false,
    logger: silentLogger,
  });
  const stop = new AbortController();
  const done = controller.run(stop.signal);
  try {
    await test(api);
  } finally {
    stop.abort();
    await done;
  }
}

const eventually = <T>(check: () => T | Promise<T>): Promise<T> =>
  vi.waitFor(check, { timeout: 5000, interval: 10 });

/** A claim of class `nfs-client` as the PV controller hands it over (storage-provisioner annotation set). */
function pendingClaim(init: Parameters<typeof claim>[0]): V1PersistentVolumeClaim {
  const pvc = claim({
    ...init,
    annotations: { ...init?.annotations, [annStorageProvisioner]: provisionerName },
  });
  return {
    ...pvc,
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    spec: { ...pvc.spec, storageClassName: 'nfs-client' },
  };
}

describe('under ProvisionController', () => {
  it('reports a traversal attempt as a ProvisioningFailed event and creates nothing', async () => {
    await using root = await temporaryRoot();
    await withController(root.path, async (api) => {
      api.seed(resources.storageClasses, {
        ...storageClass({ pathPattern: '${.PVC.namespace}/${.PVC.annotations.path}' }),
        apiVersion: 'storage.k8s.io/v1',
        kind: 'StorageClass',
      });
      api.seed(resources.persistentVolumeClaims, pendingClaim({ annotations: { path: '../../etc' } }));
      await eventually(() =>
        expect(
          api.objects(resources.events).map((event) => `${event.reason}: ${event.message}`),
        ).toContainEqual(
          expect.stringMatching(
            /^ProvisioningFailed: .*parameter "pathPattern" does not give a usable directory/u,
          ),
        ),
      );
      expect(api.objects(resources.persistentVolumes)).toEqual([]);
      expect(await readdir(root.path)).toEqual([]);
    });
  });

  it('deletes as recorded at provision time after the StorageClass is gone', async () => {
    await using root = await temporaryRoot();
    await withController(root.path, async (api) => {
      const sc = {
        ...storageClass({ pathPattern: '${.PVC.namespace}/${.PVC.name}', onDelete: 'delete' }),
        apiVersion: 'storage.k8s.io/v1',
        kind: 'StorageClass',
      };
      api.seed(resources.storageClasses, sc);
      api.seed(resources.persistentVolumeClaims, pendingClaim({ namespace: 'team-a', name: 'db' }));
      const [pv] = await eventually(() => {
        const volumes = api.objects(resources.persistentVolumes);
        expect(volumes).toHaveLength(1);
        return volumes;
      });
      expect(pv?.metadata?.annotations?.[annOnDelete]).toBe('delete');
      expect(pv?.spec?.nfs?.path).toBe('/export/team-a/db');
      expect(existsSync(join(root.path, 'team-a', 'db'))).toBe(true);

      await api.resource(resources.storageClasses).delete('nfs-client');
      await api.resource(resources.persistentVolumes).update({ ...pv, status: { phase: 'Released' } });
      await eventually(() => expect(api.objects(resources.persistentVolumes)).toEqual([]));
      expect(await readdir(root.path)).toEqual([]);
    });
  });

  it('removes an archive once its archiveRetention has passed, as the leader sweeps, and counts it', async () => {
    await using root = await temporaryRoot();
    const registry = new Registry();
    await withController(
      root.path,
      async (api) => {
        api.seed(resources.storageClasses, {
          ...storageClass({ onDelete: 'archive', archiveRetention: '2s' }),
          apiVersion: 'storage.k8s.io/v1',
          kind: 'StorageClass',
        });
        api.seed(resources.persistentVolumeClaims, pendingClaim({ namespace: 'team-a', name: 'db' }));
        const [pv] = await eventually(() => {
          const volumes = api.objects(resources.persistentVolumes);
          expect(volumes).toHaveLength(1);
          return volumes;
        });
        await api.resource(resources.persistentVolumes).update({ ...pv, status: { phase: 'Released' } });
        await eventually(() => expect(api.objects(resources.persistentVolumes)).toEqual([]));
        const archive = `archived-team-a-db-${pv?.metadata?.name}`;
        expect(await readdir(root.path)).toContain(archive);

        // The sweep removes the archive's directory, then its record: wait for both.
        await eventually(async () => expect(await readdir(root.path)).toEqual([]));
        await eventually(async () => {
          const metrics = await registry.metrics();
          expect(metrics).toContain(`${archiveMetricNames.removed}{result="removed"} 1`);
          expect(metrics).toContain(`${archiveMetricNames.removed}{result="failed"} 0`);
          expect(metrics).toMatch(new RegExp(`^${archiveMetricNames.kept} 0$`, 'mu'));
        });
      },
      50,
      new ArchiveMetrics(registry),
    );
  });

  it("never nests two claims of upstream's README class created together: one of each pair gets its volume", async () => {
    await using root = await temporaryRoot();
    const namespaces = Array.from({ length: 12 }, (_, index) => `team-r${index}`);
    await withController(root.path, async (api) => {
      api.seed(resources.storageClasses, {
        ...storageClass({
          pathPattern: '${.PVC.namespace}/${.PVC.annotations.nfs.io/storage-path}',
          onDelete: 'delete',
        }),
        apiVersion: 'storage.k8s.io/v1',
        kind: 'StorageClass',
      });
      // `app` forgets the annotation: it renders `<ns>/`, cleaned to `<ns>`, the parent of `<ns>/db`.
      for (const namespace of namespaces) {
        api.seed(
          resources.persistentVolumeClaims,
          pendingClaim({ namespace, name: 'app', uid: `${namespace}-app` }),
        );
        api.seed(
          resources.persistentVolumeClaims,
          pendingClaim({
            namespace,
            name: 'db',
            uid: `${namespace}-db`,
            annotations: { 'nfs.io/storage-path': 'db' },
          }),
        );
      }
      const volumes = await eventually(() => {
        const provisioned = api.objects(resources.persistentVolumes);
        const refused = new Set(
          api
            .objects(resources.events)
            .filter((event) => event.reason === 'ProvisioningFailed')
            .map((event) => event.involvedObject?.uid),
        );
        for (const namespace of namespaces) {
          const claims = [`${namespace}-app`, `${namespace}-db`];
          const settled = claims.filter(
            (uid) => refused.has(uid) || provisioned.some((pv) => pv.spec?.claimRef?.uid === uid),
          );
          expect(settled).toHaveLength(2);
        }
        return provisioned;
      });

      const paths = volumes.map((pv) => pv.spec?.nfs?.path ?? '');
      for (const outer of paths) {
        expect(paths.filter((inner) => inner.startsWith(`${outer}/`))).toEqual([]);
      }
      for (const namespace of namespaces) {
        expect(volumes.filter((pv) => pv.spec?.claimRef?.namespace === namespace)).toHaveLength(1);
      }
    });
  });
});
