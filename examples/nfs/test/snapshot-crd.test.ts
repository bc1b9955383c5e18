/**
 * nfs-subdir ships the `DirectorySnapshot` CRD twice (the kustomize manifests and the chart's
 * `crds/`): both are hostpath's, object for object, and the kustomization applies it.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadAllYaml, loadYaml } from '@kubernetes/client-node';
import { expect, it } from 'vitest';

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
