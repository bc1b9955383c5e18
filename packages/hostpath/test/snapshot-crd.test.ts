import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { directorySnapshots, snapshotKind } from '@kube-provisioner/controller/snapshot';
import { loadAllYaml } from '@kubernetes/client-node';
import { expect, it } from 'vitest';

interface Crd {
  kind: string;
  metadata: { name: string };
  spec: {
    group: string;
    scope: string;
    names: { kind: string; plural: string };
    versions: {
      name: string;
      subresources?: { status?: object };
      additionalPrinterColumns: { name: string; jsonPath: string }[];
      schema: { openAPIV3Schema: { properties: { status: { properties: Record<string, unknown> } } } };
    }[];
  };
}

const [crd] = loadAllYaml(
  readFileSync(join(import.meta.dirname, '..', 'deploy', 'snapshot-crd.yaml'), 'utf8'),
) as Crd[];

it('the shipped CRD serves the resource the code reads, with a status subresource and useful columns', () => {
  const [version] = crd?.spec.versions ?? [];
  expect(crd?.metadata.name).toBe(`${directorySnapshots.plural}.${directorySnapshots.group}`);
  expect(crd?.spec).toMatchObject({
    group: snapshotKind.apiGroup,
    scope: 'Namespaced',
    names: { kind: snapshotKind.kind, plural: directorySnapshots.plural },
  });
  expect(crd?.spec.versions).toHaveLength(1);
  expect(version?.name).toBe(directorySnapshots.version);
  expect(version?.subresources?.status).toEqual({});
  expect(version?.additionalPrinterColumns.map((column) => column.name)).toEqual([
    'Ready',
    'Source',
    'RestoreSize',
    'DeletionPolicy',
    'Age',
  ]);
  expect(Object.keys(version?.schema.openAPIV3Schema.properties.status.properties ?? {})).toEqual([
    'readyToUse',
    'restoreSize',
    'creationTime',
    'error',
  ]);
});
