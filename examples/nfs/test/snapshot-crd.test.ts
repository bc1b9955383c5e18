/**
 * nfs-subdir ships the `DirectorySnapshot` CRD twice (the kustomize manifests and the chart's
 * `crds/`): both are hostpath's, object for object, and the kustomization applies it. The chart
 * registers the kind with the volume-data-source-validator only when asked, as hostpath's optional
 * manifest does.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { snapshotKind } from '@kube-provisioner/controller/snapshot';
import { helmBinary } from '@kube-provisioner/testenv/internal';
import { type KubernetesObject, loadAllYaml, loadYaml } from '@kubernetes/client-node';
import { beforeAll, expect, it } from 'vitest';
import { renderChart } from './support/chart-facts.ts';
import { type ChartCase, chartCases } from './support/chart-matrix.ts';

const read = (...path: string[]) => readFileSync(join(import.meta.dirname, '..', ...path), 'utf8');
const hostpathCrd = loadAllYaml(read('..', '..', 'packages', 'hostpath', 'deploy', 'snapshot-crd.yaml'));

it.each([
  ['deploy/snapshot-crd.yaml', ['deploy', 'snapshot-crd.yaml']],
  ['the chart’s crds/', ['chart', 'nfs-subdir-provisioner', 'crds', 'directorysnapshots.yaml']],
])('%s is the DirectorySnapshot CRD of hostpath', (_name, path) => {
  expect(loadAllYaml(read(...path))).toEqual(hostpathCrd);
  expect(hostpathCrd).toMatchObject([
    { metadata: { name: 'directorysnapshots.snapshot.kube-provisioner.io' } },
  ]);
});

it('is applied by the kustomization, before the provisioner', () => {
  const { resources } = loadYaml<{ resources: string[] }>(read('deploy', 'kustomization.yaml'));
  expect(resources.indexOf('snapshot-crd.yaml')).toBeGreaterThan(-1);
  expect(resources.indexOf('snapshot-crd.yaml')).toBeLessThan(resources.indexOf('deployment.yaml'));
});

let helm = '';
beforeAll(async () => {
  helm = await helmBinary();
}, 900_000);

it('registers the kind with a VolumePopulator only with snapshots.volumePopulator, as hostpath’s manifest does', async () => {
  const chartDir = join(import.meta.dirname, '..', 'chart', 'nfs-subdir-provisioner');
  const defaults = chartCases.find((c) => c.id === 'default') as ChartCase;
  const populators = (objects: KubernetesObject[]) => objects.filter((o) => o.kind === 'VolumePopulator');
  expect(populators(await renderChart(helm, chartDir, defaults))).toEqual([]);
  const rendered = populators(
    await renderChart(helm, chartDir, defaults, { overrides: { snapshots: { volumePopulator: true } } }),
  );
  const [hostpath] = loadAllYaml(
    read('..', '..', 'packages', 'hostpath', 'deploy', 'snapshot-volume-populator.yaml'),
  );
  expect(rendered).toHaveLength(1);
  expect(rendered[0]).toMatchObject(hostpath as object);
  expect(rendered[0]).toMatchObject({
    apiVersion: 'populator.storage.k8s.io/v1beta1',
    sourceKind: { group: snapshotKind.apiGroup, kind: snapshotKind.kind },
  });
});
